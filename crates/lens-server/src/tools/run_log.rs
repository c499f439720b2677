//! A run's whole output, kept for download when what its step shows was cut.
//!
//! Output is held in memory up to [`IN_MEMORY`]; past that it streams into the vault
//! from a task of its own, so memory stays bounded for a flood. At the end the log is
//! kept only if the step's output was cut; otherwise nothing is written, or what was is
//! removed. The log is capped at the share size limit, and says so when it is cut there.

use tokio::{sync::mpsc, task::JoinHandle};

use crate::files::vault::Vault;

const IN_MEMORY: usize = 256 * 1024;

enum Chunk {
    Data(Vec<u8>),
    Finish,
}

pub struct RunLog {
    vault: Vault,
    chat_id: String,
    file_id: String,
    memory: Vec<u8>,
    spilled: Option<(mpsc::UnboundedSender<Chunk>, JoinHandle<std::io::Result<u64>>)>,
    total: u64,
    cap: u64,
}

impl RunLog {
    pub fn new(vault: Vault, chat_id: &str, cap: u64) -> Self {
        Self {
            vault,
            chat_id: chat_id.to_owned(),
            file_id: crate::ids::random_id(16),
            memory: Vec::new(),
            spilled: None,
            total: 0,
            cap,
        }
    }

    pub fn push(&mut self, bytes: &[u8]) {
        let room = self.cap.saturating_sub(self.total) as usize;
        let bytes = &bytes[..bytes.len().min(room)];
        if bytes.is_empty() {
            return;
        }
        self.total += bytes.len() as u64;
        match &self.spilled {
            Some((tx, _)) => {
                let _ = tx.send(Chunk::Data(bytes.to_vec()));
            }
            None => {
                self.memory.extend_from_slice(bytes);
                if self.memory.len() > IN_MEMORY {
                    self.spill();
                }
            }
        }
    }

    /// Moves what is in memory to a writer task that takes the rest.
    fn spill(&mut self) {
        let (tx, mut rx) = mpsc::unbounded_channel::<Chunk>();
        let (vault, chat, file) = (self.vault.clone(), self.chat_id.clone(), self.file_id.clone());
        let handle = tokio::spawn(async move {
            let mut writer = vault.create(&chat, &file).await?;
            while let Some(chunk) = rx.recv().await {
                match chunk {
                    Chunk::Data(bytes) => writer.write(&bytes).await?,
                    Chunk::Finish => return writer.finish().await,
                }
            }
            // Dropped without Finish: the writer removes its partial file.
            Err(std::io::Error::other("the log was not kept"))
        });
        let _ = tx.send(Chunk::Data(std::mem::take(&mut self.memory)));
        self.spilled = Some((tx, handle));
    }

    /// Keeps the log (when `keep`): its file id and size.
    pub async fn finish(mut self, keep: bool) -> Option<(String, u64)> {
        if !keep {
            return None;
        }
        if self.total >= self.cap {
            let note = format!("\n[the log stops here, at the {} byte limit]\n", self.cap);
            self.cap = u64::MAX;
            self.push(note.as_bytes());
        }
        let (vault, chat, file, memory, spilled) = (
            self.vault.clone(),
            self.chat_id.clone(),
            self.file_id.clone(),
            std::mem::take(&mut self.memory),
            self.spilled.take(),
        );
        let written = match spilled {
            Some((tx, handle)) => {
                let _ = tx.send(Chunk::Finish);
                handle.await.unwrap_or_else(|_| Err(std::io::Error::other("the log writer failed")))
            }
            None => vault.write_from(&chat, &file, &memory).await,
        };
        match written {
            Ok(size) => Some((self.file_id.clone(), size)),
            Err(e) => {
                tracing::error!(error = %e, "keeping a run's log failed");
                None
            }
        }
    }
}
