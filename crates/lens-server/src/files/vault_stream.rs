//! Vault files as streams: read a few chunks ahead of their consumer by a task of their
//! own, or written by one from parts sent to it. The channels are bounded, so memory
//! stays a few chunks whatever the file's size and however slow the other side.

use std::io;

use futures_util::Stream;
use tokio::sync::mpsc;

use crate::files::vault::Vault;

/// Chunks read ahead of the consumer, at most.
const AHEAD: usize = 4;

/// What the writing thread is sent.
enum Piece {
    Bytes(Vec<u8>),
    Finish,
    /// Give up: other senders may still be held, so the end is said, not inferred.
    Abandon,
}

/// A vault file being written by a task of its own.
pub struct BackgroundWrite {
    pieces: mpsc::Sender<Piece>,
    done: tokio::task::JoinHandle<io::Result<u64>>,
}

impl BackgroundWrite {
    /// Hands bytes to the writer; waits while it is behind.
    pub async fn write(&self, bytes: Vec<u8>) -> io::Result<()> {
        self.pieces.send(Piece::Bytes(bytes)).await.map_err(|_| self.failed())
    }

    /// A sender of bytes, for a caller that needs one of its own.
    pub fn sender(
        &self,
    ) -> impl Fn(Vec<u8>) -> futures_util::future::BoxFuture<'static, io::Result<()>> + Send + use<> {
        let pieces = self.pieces.clone();
        move |bytes| {
            let pieces = pieces.clone();
            Box::pin(async move {
                pieces.send(Piece::Bytes(bytes)).await.map_err(|_| io::Error::other("the vault write failed"))
            })
        }
    }

    /// Puts the whole file in place; its size. Dropping a write unfinished leaves nothing.
    pub async fn finish(self) -> io::Result<u64> {
        let _ = self.pieces.send(Piece::Finish).await;
        drop(self.pieces);
        self.done.await.map_err(io::Error::other)?
    }

    /// Gives the write up and waits until its partial file is gone.
    pub async fn abandon(self) {
        let _ = self.pieces.send(Piece::Abandon).await;
        drop(self.pieces);
        let _ = self.done.await;
    }

    fn failed(&self) -> io::Error {
        io::Error::other("the vault write failed")
    }
}

impl Vault {
    /// Starts writing `owner`'s file `id` from the parts sent to it.
    pub fn write_in_background(&self, owner: &str, id: &str) -> BackgroundWrite {
        let (pieces, mut rx) = mpsc::channel::<Piece>(AHEAD);
        let (vault, owner, id) = (self.clone(), owner.to_owned(), id.to_owned());
        let done = tokio::spawn(async move {
            let mut writer = vault.create(&owner, &id).await?;
            while let Some(piece) = rx.recv().await {
                match piece {
                    Piece::Bytes(bytes) => writer.write(&bytes).await?,
                    Piece::Finish => return writer.finish().await,
                    Piece::Abandon => break,
                }
            }
            // Abandoned: the writer leaves nothing as it drops.
            Err(io::Error::other("the write was abandoned"))
        });
        BackgroundWrite { pieces, done }
    }

    /// `owner`'s file `id`, decrypted chunk by chunk, a few ahead.
    pub fn read_stream(&self, owner: &str, id: &str) -> impl Stream<Item = io::Result<Vec<u8>>> + Send + 'static {
        let (tx, rx) = mpsc::channel::<io::Result<Vec<u8>>>(AHEAD);
        let (vault, owner, id) = (self.clone(), owner.to_owned(), id.to_owned());
        tokio::spawn(async move {
            let mut reader = match vault.open(&owner, &id).await {
                Ok(reader) => reader,
                Err(e) => {
                    let _ = tx.send(Err(io::Error::other(e.to_string()))).await;
                    return;
                }
            };
            loop {
                let next = match reader.next_chunk().await {
                    Ok(Some(chunk)) => Ok(chunk),
                    Ok(None) => return,
                    Err(e) => Err(io::Error::other(e.to_string())),
                };
                let failed = next.is_err();
                // The reader is gone: stop reading.
                if tx.send(next).await.is_err() || failed {
                    return;
                }
            }
        });
        futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|item| (item, rx)) })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use futures_util::StreamExt;

    use super::*;
    use crate::secret::ServerSecret;

    #[tokio::test]
    async fn a_file_written_in_parts_reads_back_and_an_abandoned_one_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let secret = ServerSecret::load(Some("a-test-secret-that-is-long-enough-for-lens"), dir.path()).unwrap();
        let blobs = Arc::new(crate::files::blobs::LocalBlobs::new(dir.path()));
        let vault = Vault::new(blobs, Arc::new(secret));
        let write = vault.write_in_background("c", "f");
        for i in 0..40u8 {
            write.write(vec![i; 100_000]).await.unwrap();
        }
        assert_eq!(write.finish().await.unwrap(), 4_000_000);
        let back: Vec<u8> = vault.read_stream("c", "f").map(|c| c.unwrap()).concat().await;
        assert_eq!(back.len(), 4_000_000);
        assert!(back.chunks(100_000).enumerate().all(|(i, c)| c.iter().all(|&b| b == i as u8)));

        let abandoned = vault.write_in_background("c", "g");
        abandoned.write(vec![1; 10]).await.unwrap();
        // Another sender still held does not keep the write alive.
        let _other = abandoned.sender();
        abandoned.abandon().await;
        let left: Vec<_> =
            std::fs::read_dir(dir.path().join("chat-files/c")).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, ["f"], "no partial file");
        let missing: Vec<_> = vault.read_stream("c", "nope").collect().await;
        assert!(matches!(missing.as_slice(), [Err(_)]));
    }
}
