//! The vault in an S3-compatible bucket: a real Garage server, started by `scripts/garage`
//! (its bucket in `LENS_TEST_S3_BUCKET`, its address and key in the usual AWS_* variables).
//! Files go up in parts and come back byte for byte; a write never finished leaves no
//! object; a store that goes away mid-download or mid-upload ends with an error, never
//! wrong bytes or a half-file, and the next read works. Skipped, with a line saying so,
//! where no Garage was started.

use std::sync::{
    Arc,
    atomic::{AtomicU32, Ordering},
};

use lens_server::files::{
    Vault, VaultError,
    blobs::{Blobs, S3Blobs},
};
use lens_server::secret::ServerSecret;
use tokio::{io::AsyncReadExt, net::TcpListener, task::JoinSet};

/// A bucket address of its own for each caller; `None` where no Garage was started.
pub fn fresh_prefix() -> Option<String> {
    let Ok(bucket) = std::env::var("LENS_TEST_S3_BUCKET") else {
        eprintln!("skipped: no S3 server (run the tests under scripts/garage, as make test does)");
        return None;
    };
    static NEXT: AtomicU32 = AtomicU32::new(0);
    Some(format!("s3://{bucket}/t{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed)))
}

/// A bucket address of its own where a Garage was started; `None` (quietly) elsewhere.
pub fn fresh_prefix_if_started() -> Option<String> {
    std::env::var("LENS_TEST_S3_BUCKET").is_ok().then(fresh_prefix).flatten()
}

fn vault_over(blobs: Arc<dyn Blobs>) -> Vault {
    let dir = tempfile::tempdir().unwrap();
    let secret = ServerSecret::load(Some("a-test-secret-that-is-long-enough-for-lens"), dir.path()).unwrap();
    Vault::new(blobs, Arc::new(secret))
}

fn pattern(size: usize) -> Vec<u8> {
    (0..size).map(|i| (i % 251) as u8 ^ (i / 4093) as u8).collect()
}

async fn read_all(vault: &Vault, owner: &str, id: &str) -> Result<Vec<u8>, VaultError> {
    let mut reader = vault.open(owner, id).await?;
    let mut out = Vec::new();
    while let Some(chunk) = reader.next_chunk().await? {
        out.extend(chunk);
    }
    Ok(out)
}

async fn raw(blobs: &dyn Blobs, key: &str) -> Option<Vec<u8>> {
    let mut body = blobs.open(key).await.unwrap()?;
    let mut out = Vec::new();
    body.read_to_end(&mut out).await.unwrap();
    Some(out)
}

#[tokio::test]
async fn files_round_trip_through_the_bucket_sealed_at_every_size() {
    let Some(url) = fresh_prefix() else { return };
    let blobs: Arc<dyn Blobs> = Arc::new(S3Blobs::from_url(&url).unwrap());
    let vault = vault_over(blobs.clone());
    let chunk = lens_server::files::vault::CHUNK;
    // Across the chunk's edges, and past one 8 MiB part (a multipart upload of three parts).
    for size in [0, 1, chunk - 1, chunk, chunk + 1, 20 * 1024 * 1024 + 17] {
        let data = pattern(size);
        assert_eq!(vault.write_from("chat1", "f1", &data).await.unwrap(), size as u64);
        assert_eq!(read_all(&vault, "chat1", "f1").await.unwrap(), data, "size {size}");
        let stored = raw(&*blobs, &vault.key("chat1", "f1")).await.expect("the object");
        if size >= 64 {
            assert!(!stored.windows(64).any(|w| w == &data[..64]), "only ciphertext in the bucket");
        }
    }
    // Under another owner the same bytes do not open; a missing file is missing.
    let copy = raw(&*blobs, &vault.key("chat1", "f1")).await.unwrap();
    let mut w = blobs.create(&vault.key("chat2", "f1")).await.unwrap();
    w.write(&copy).await.unwrap();
    w.finish().await.unwrap();
    assert!(matches!(vault.open("chat2", "f1").await, Err(VaultError::Tampered)));
    assert!(matches!(vault.open("chat1", "nope").await, Err(VaultError::Missing)));
    // A conversation's files go with it; another's stay.
    vault.delete_folder("chat1").await.unwrap();
    assert!(matches!(vault.open("chat1", "f1").await, Err(VaultError::Missing)));
    assert!(raw(&*blobs, &vault.key("chat2", "f1")).await.is_some());
    vault.delete("chat2", "f1").await.unwrap();
    assert!(raw(&*blobs, &vault.key("chat2", "f1")).await.is_none());
}

#[tokio::test]
async fn a_write_never_finished_leaves_no_object() {
    let Some(url) = fresh_prefix() else { return };
    let blobs: Arc<dyn Blobs> = Arc::new(S3Blobs::from_url(&url).unwrap());
    let vault = vault_over(blobs.clone());
    // Two parts already sent, then the writer is dropped.
    let mut writer = vault.create("chat1", "half").await.unwrap();
    writer.write(&pattern(18 * 1024 * 1024)).await.unwrap();
    drop(writer);
    let background = vault.write_in_background("chat1", "abandoned");
    background.write(pattern(10 * 1024 * 1024)).await.unwrap();
    background.abandon().await;
    for id in ["half", "abandoned"] {
        assert!(matches!(vault.open("chat1", id).await, Err(VaultError::Missing)), "{id} is not there");
    }
}

/// A TCP relay to the store that can be cut, as a network or a store going away.
struct Relay {
    addr: String,
    tasks: JoinSet<()>,
}

impl Relay {
    async fn to(upstream: &str) -> Relay {
        let upstream = upstream.trim_start_matches("http://").to_owned();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = format!("http://{}", listener.local_addr().unwrap());
        let mut tasks = JoinSet::new();
        tasks.spawn(async move {
            let mut links = JoinSet::new();
            while let Ok((mut inbound, _)) = listener.accept().await {
                let upstream = upstream.clone();
                links.spawn(async move {
                    if let Ok(mut outbound) = tokio::net::TcpStream::connect(&upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
            }
        });
        Relay { addr, tasks }
    }

    /// Every connection through the relay drops, and no new one is taken.
    fn cut(&mut self) {
        self.tasks.abort_all();
    }
}

#[tokio::test]
async fn a_store_gone_mid_download_or_mid_upload_ends_with_an_error_and_no_half_file() {
    let Some(url) = fresh_prefix() else { return };
    let endpoint = std::env::var("AWS_ENDPOINT_URL").unwrap();
    let direct: Arc<dyn Blobs> = Arc::new(S3Blobs::from_url(&url).unwrap());
    let data = pattern(24 * 1024 * 1024);
    let vault = vault_over(direct.clone());
    vault.write_from("chat1", "big", &data).await.unwrap();

    // Mid-download: the chunks read so far are right, then the read fails (after its
    // resumes), with the store's error rather than a "damaged file".
    let mut relay = Relay::to(&endpoint).await;
    let relayed = vault_over(Arc::new(S3Blobs::from_url_at(&url, Some(&relay.addr)).unwrap()));
    let mut reader = relayed.open("chat1", "big").await.unwrap();
    let first = reader.next_chunk().await.unwrap().unwrap();
    assert_eq!(first, data[..first.len()]);
    relay.cut();
    let mut read = first.len();
    let failed = loop {
        match reader.next_chunk().await {
            Ok(Some(chunk)) => {
                assert_eq!(chunk, data[read..read + chunk.len()], "never wrong bytes");
                read += chunk.len();
            }
            Ok(None) => panic!("the whole file came through a cut connection"),
            Err(e) => break e,
        }
    };
    assert!(matches!(failed, VaultError::Io(_)), "the store's failure, not a damaged file: {failed:?}");
    assert!(read < data.len());

    // Mid-upload: the write fails, and nothing appears under the name.
    let mut relay = Relay::to(&endpoint).await;
    let relayed = vault_over(Arc::new(S3Blobs::from_url_at(&url, Some(&relay.addr)).unwrap()));
    let mut writer = relayed.create("chat1", "cut").await.unwrap();
    writer.write(&data[..9 * 1024 * 1024]).await.unwrap();
    relay.cut();
    let sent = async {
        writer.write(&data[9 * 1024 * 1024..]).await?;
        writer.finish().await
    };
    assert!(sent.await.is_err(), "an upload through a cut connection fails");
    assert!(matches!(vault.open("chat1", "cut").await, Err(VaultError::Missing)), "no half-file");

    // The store is still there for the next read.
    assert_eq!(read_all(&vault, "chat1", "big").await.unwrap(), data);
}
