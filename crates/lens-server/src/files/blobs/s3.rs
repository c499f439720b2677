//! Objects in an S3-compatible bucket, through the `object_store` crate (Apache Arrow's:
//! kept by the same people as DataFusion, it speaks S3, GCS and Azure, with multipart
//! uploads, ranged reads and retries; the AWS SDK would be a far larger build for S3
//! alone).
//!
//! Writes go up in parts of [`PART`] (at most two in flight), so an upload holds a few
//! parts in memory whatever its size, and an object appears only when its last part is
//! in. Reads stream as they come; a connection lost mid-read goes on from where it
//! stopped (a ranged read of the same version), a few times, before the read fails.

use std::{io, sync::Arc, time::Duration};

use bytes::Bytes;
use futures_util::{StreamExt, TryStreamExt, stream::BoxStream};
use object_store::{
    GetOptions, GetRange, ObjectStore, RetryConfig, aws::AmazonS3Builder, buffered::BufWriter, path::Path,
    prefix::PrefixStore,
};
use tokio::io::AsyncWriteExt;

use super::{BlobRead, BlobWrite, Blobs};

/// Bytes per uploaded part (S3 asks 5 MiB at least, but for the last).
const PART: usize = 8 * 1024 * 1024;
/// Times a read resumes after its connection failed.
const RESUMES: u32 = 3;

/// Objects under a bucket's prefix.
#[derive(Clone)]
pub struct S3Blobs {
    store: Arc<dyn ObjectStore>,
    url: String,
}

impl S3Blobs {
    /// The bucket and prefix of `url` (`s3://bucket/prefix`); the endpoint, region and
    /// credentials come from the usual `AWS_*` variables (`AWS_ENDPOINT_URL`,
    /// `AWS_REGION`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`). An `http://` endpoint
    /// is allowed as the admin named it (a store on the same host or network).
    pub fn from_url(url: &str) -> io::Result<Self> {
        Self::from_url_at(url, None)
    }

    /// As [`S3Blobs::from_url`], at `endpoint` rather than the variables' (for a store
    /// reached through another address).
    pub fn from_url_at(url: &str, endpoint: Option<&str>) -> io::Result<Self> {
        let rest = url
            .strip_prefix("s3://")
            .ok_or_else(|| io::Error::other(format!("{url} is not an s3://bucket/prefix address")))?;
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(io::Error::other(format!("{url} names no bucket")));
        }
        // A few quick retries, then the error: a person waiting on a download hears
        // within seconds that the store is away, not after the client's three minutes.
        let retry = RetryConfig { max_retries: 3, retry_timeout: Duration::from_secs(20), ..RetryConfig::default() };
        let mut builder = AmazonS3Builder::from_env().with_bucket_name(bucket).with_retry(retry);
        if let Some(endpoint) = endpoint {
            builder = builder.with_endpoint(endpoint);
        }
        let endpoint = endpoint
            .map(str::to_owned)
            .or_else(|| std::env::var("AWS_ENDPOINT_URL").or_else(|_| std::env::var("AWS_ENDPOINT")).ok());
        if endpoint.is_some_and(|e| e.starts_with("http://")) {
            builder = builder.with_allow_http(true);
        }
        let s3 = builder.build().map_err(io::Error::other)?;
        let prefix = prefix.trim_matches('/');
        let store: Arc<dyn ObjectStore> =
            if prefix.is_empty() { Arc::new(s3) } else { Arc::new(PrefixStore::new(s3, prefix)) };
        Ok(Self { store, url: format!("s3://{bucket}/{prefix}") })
    }
}

fn to_io(e: object_store::Error) -> io::Error {
    match e {
        object_store::Error::NotFound { .. } => io::Error::new(io::ErrorKind::NotFound, e),
        e => io::Error::other(e),
    }
}

#[async_trait::async_trait]
impl Blobs for S3Blobs {
    async fn create(&self, key: &str) -> io::Result<Box<dyn BlobWrite>> {
        let writer = BufWriter::with_capacity(self.store.clone(), Path::from(key), PART).with_max_concurrency(2);
        Ok(Box::new(S3Write { writer: Some(writer) }))
    }

    async fn open(&self, key: &str) -> io::Result<Option<BlobRead>> {
        let path = Path::from(key);
        let first = match self.store.get(&path).await {
            Ok(got) => got,
            Err(object_store::Error::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(to_io(e)),
        };
        let resume = Resume {
            store: self.store.clone(),
            path,
            version: first.meta.e_tag.clone(),
            at: 0,
            size: first.meta.size,
            left: RESUMES,
        };
        let body = futures_util::stream::unfold((first.into_stream(), resume), |(mut body, mut resume)| async move {
            loop {
                match body.next().await {
                    Some(Ok(bytes)) => {
                        resume.at += bytes.len() as u64;
                        return Some((Ok(bytes), (body, resume)));
                    }
                    None if resume.at >= resume.size => return None,
                    // Ended short or failed: go on from here, or give up.
                    end => match resume.again().await {
                        Ok(rest) => body = rest,
                        Err(e) => {
                            let e = match end {
                                Some(Err(first)) => io::Error::other(format!("{first}; then {e}")),
                                _ => e,
                            };
                            resume.left = 0;
                            resume.at = resume.size;
                            return Some((Err(e), (futures_util::stream::empty().boxed(), resume)));
                        }
                    },
                }
            }
        });
        Ok(Some(Box::new(tokio_util::io::StreamReader::new(body.boxed()))))
    }

    async fn delete(&self, key: &str) -> io::Result<()> {
        match self.store.delete(&Path::from(key)).await {
            Err(object_store::Error::NotFound { .. }) | Ok(()) => Ok(()),
            Err(e) => Err(to_io(e)),
        }
    }

    async fn delete_prefix(&self, prefix: &str) -> io::Result<()> {
        let listed = self.store.list(Some(&Path::from(prefix))).map_ok(|meta| meta.location).boxed();
        let mut gone = self.store.delete_stream(listed);
        while let Some(done) = gone.next().await {
            match done {
                Ok(_) | Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => return Err(to_io(e)),
            }
        }
        Ok(())
    }

    async fn list(&self, prefix: &str) -> io::Result<Vec<String>> {
        let prefix = (!prefix.is_empty()).then(|| Path::from(prefix));
        let listed: Vec<_> = self.store.list(prefix.as_ref()).try_collect().await.map_err(to_io)?;
        Ok(listed.into_iter().map(|meta| meta.location.to_string()).collect())
    }

    fn describe(&self) -> String {
        self.url.clone()
    }
}

/// Where a read stands, to go on after a lost connection.
struct Resume {
    store: Arc<dyn ObjectStore>,
    path: Path,
    /// The object's version as first read: a resumed read of another fails.
    version: Option<String>,
    at: u64,
    size: u64,
    left: u32,
}

impl Resume {
    async fn again(&mut self) -> io::Result<BoxStream<'static, object_store::Result<Bytes>>> {
        if self.left == 0 || self.at >= self.size {
            return Err(io::Error::other("the file store stopped sending the file"));
        }
        self.left -= 1;
        let options = GetOptions {
            range: Some(GetRange::Offset(self.at)),
            if_match: self.version.clone(),
            ..GetOptions::default()
        };
        let rest = self.store.get_opts(&self.path, options).await.map_err(to_io)?;
        Ok(rest.into_stream())
    }
}

/// An object going up in parts; it exists once [`BlobWrite::finish`] completes it.
struct S3Write {
    /// `None` once finished.
    writer: Option<BufWriter>,
}

#[async_trait::async_trait]
impl BlobWrite for S3Write {
    async fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        match &mut self.writer {
            Some(writer) => writer.write_all(bytes).await,
            None => Err(io::Error::other("already finished")),
        }
    }

    async fn finish(mut self: Box<Self>) -> io::Result<()> {
        let mut writer = self.writer.take().ok_or_else(|| io::Error::other("already finished"))?;
        if let Err(e) = writer.shutdown().await {
            let _ = writer.abort().await;
            return Err(e);
        }
        Ok(())
    }
}

impl Drop for S3Write {
    /// An unfinished upload is never completed, so no object appears; its parts are
    /// given back to the store in the background.
    fn drop(&mut self) {
        if let (Some(mut writer), Ok(runtime)) = (self.writer.take(), tokio::runtime::Handle::try_current()) {
            runtime.spawn(async move {
                let _ = writer.abort().await;
            });
        }
    }
}
