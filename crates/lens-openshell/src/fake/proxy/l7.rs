//! The proxy's REST rules inside a connection whose TLS it ended, as the gateway's
//! supervisor applies an endpoint's access preset (`l7/mod.rs`, `l7/relay.rs`,
//! `l7/rest.rs`, commit 2f7fb6559): `read-only` lets `GET`, `HEAD` and `OPTIONS` through
//! and answers anything else 403 with a JSON body, closing the connection, without
//! the request reaching the host; the refusal is logged as an `HTTP:` line with the
//! policy engine's reason. Requests are read one at a time (HTTP/1.1, bodies by
//! `Content-Length` or chunks); the host's answers pass back as they come.

use std::sync::Arc;

use tokio::{
    io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader},
    sync::Mutex,
};

/// The longest request head the proxy reads.
const MAX_HEAD: usize = 64 * 1024;

/// The methods `read-only` lets through.
const READ_ONLY: &[&str] = &["GET", "HEAD", "OPTIONS"];

/// A request the rules refused: what the log line needs.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Refused {
    pub method: String,
    pub path: String,
    pub reason: String,
}

/// Relays requests from `client` to `upstream` and answers back until either side
/// ends; returns the request refused, if one was.
pub(crate) async fn relay<C, U>(client: C, upstream: U, policy: &str) -> Option<Refused>
where
    C: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    U: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (client_read, client_write) = tokio::io::split(client);
    let (mut upstream_read, mut upstream_write) = tokio::io::split(upstream);
    let client_write = Arc::new(Mutex::new(client_write));
    // Answers pass back as they come, a chunk at a time, so a refusal can be written
    // between two of them.
    let back = {
        let client_write = client_write.clone();
        tokio::spawn(async move {
            let mut buf = vec![0u8; 16 * 1024];
            while let Ok(n) = upstream_read.read(&mut buf).await {
                if n == 0 || client_write.lock().await.write_all(&buf[..n]).await.is_err() {
                    break;
                }
            }
            let _ = client_write.lock().await.shutdown().await;
        })
    };
    let mut requests = BufReader::new(client_read);
    let refused = loop {
        let Some(head) = read_head(&mut requests).await else { break None };
        let Some((method, path)) = request_line(&head) else { break None };
        if !READ_ONLY.contains(&method.as_str()) {
            let reason = format!("{method} {path} not permitted by policy");
            let mut w = client_write.lock().await;
            let _ = w.write_all(&forbidden(policy, &method, &path, &reason)).await;
            let _ = w.shutdown().await;
            break Some(Refused { method, path, reason });
        }
        if upstream_write.write_all(&head).await.is_err() || !pass_body(&head, &mut requests, &mut upstream_write).await
        {
            break None;
        }
    };
    if refused.is_some() {
        back.abort();
    } else {
        let _ = upstream_write.shutdown().await;
        let _ = back.await;
    }
    refused
}

/// A request's head, through its blank line; `None` at the end or past the limit.
async fn read_head<R: AsyncBufReadExt + Unpin>(reader: &mut R) -> Option<Vec<u8>> {
    let mut head = Vec::new();
    loop {
        let before = head.len();
        if reader.read_until(b'\n', &mut head).await.ok()? == 0 || head.len() > MAX_HEAD {
            return None;
        }
        let line = &head[before..];
        if line == b"\r\n" || line == b"\n" {
            // Blank lines before a request are allowed and skipped.
            if before == 0 {
                head.clear();
                continue;
            }
            return Some(head);
        }
    }
}

/// The method and target of a request's first line.
fn request_line(head: &[u8]) -> Option<(String, String)> {
    let line = std::str::from_utf8(head).ok()?.lines().next()?;
    let mut parts = line.split_whitespace();
    Some((parts.next()?.to_owned(), parts.next()?.to_owned()))
}

/// A header's value, by name, case-insensitively.
fn header<'a>(head: &'a [u8], name: &str) -> Option<&'a str> {
    std::str::from_utf8(head).ok()?.lines().skip(1).find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// Passes the request's body on; `false` when a side ended mid-body.
async fn pass_body<R, W>(head: &[u8], from: &mut R, to: &mut W) -> bool
where
    R: AsyncBufReadExt + Unpin,
    W: AsyncWrite + Unpin,
{
    let chunked = header(head, "transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    if chunked {
        return pass_chunks(from, to).await.is_some();
    }
    let length = header(head, "content-length").and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    matches!(tokio::io::copy(&mut from.take(length), to).await, Ok(n) if n == length)
}

/// Passes chunks on through the last (size 0) and its trailers.
async fn pass_chunks<R, W>(from: &mut R, to: &mut W) -> Option<()>
where
    R: AsyncBufReadExt + Unpin,
    W: AsyncWrite + Unpin,
{
    loop {
        let mut line = Vec::new();
        from.read_until(b'\n', &mut line).await.ok().filter(|n| *n > 0)?;
        to.write_all(&line).await.ok()?;
        let size = std::str::from_utf8(&line).ok()?.split(';').next()?.trim();
        let size = u64::from_str_radix(size, 16).ok()?;
        if size == 0 {
            // Trailers, then the blank line that ends them.
            loop {
                let mut trailer = Vec::new();
                from.read_until(b'\n', &mut trailer).await.ok().filter(|n| *n > 0)?;
                to.write_all(&trailer).await.ok()?;
                if trailer == b"\r\n" || trailer == b"\n" {
                    return Some(());
                }
            }
        }
        // The chunk and its closing line break.
        let copied = tokio::io::copy(&mut from.take(size + 2), to).await.ok()?;
        (copied == size + 2).then_some(())?;
    }
}

/// The supervisor's answer to a refused request.
fn forbidden(policy: &str, method: &str, path: &str, reason: &str) -> Vec<u8> {
    let quote = |s: &str| format!("{s:?}");
    let body = format!(
        "{{\"error\":\"policy_denied\",\"policy\":{},\"detail\":{},\"layer\":\"l7\",\"method\":{},\"path\":{}}}",
        quote(policy),
        quote(reason),
        quote(method),
        quote(path)
    );
    format!(
        "HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
         X-OpenShell-Policy: {policy}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A host that answers every request `200` with its method and path, and records them.
    async fn host() -> (tokio::io::DuplexStream, tokio::task::JoinHandle<Vec<String>>) {
        let (ours, theirs) = tokio::io::duplex(64 * 1024);
        let seen = tokio::spawn(async move {
            let (r, mut w) = tokio::io::split(theirs);
            let mut r = BufReader::new(r);
            let mut seen = Vec::new();
            while let Some(head) = read_head(&mut r).await {
                let (method, path) = request_line(&head).unwrap();
                let mut sink = tokio::io::sink();
                pass_body(&head, &mut r, &mut sink).await;
                let body = format!("{method} {path}");
                let answer = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}", body.len());
                w.write_all(answer.as_bytes()).await.unwrap();
                seen.push(body);
            }
            seen
        });
        (ours, seen)
    }

    #[tokio::test]
    async fn reads_pass_an_upload_is_refused_403_and_never_reaches_the_host() {
        let (upstream, seen) = host().await;
        let (program, proxy_side) = tokio::io::duplex(64 * 1024);
        let relay = tokio::spawn(async move { relay(proxy_side, upstream, "lens").await });
        let (r, mut w) = tokio::io::split(program);
        let mut r = BufReader::new(r);
        w.write_all(b"GET /simple/ HTTP/1.1\r\nHost: x\r\n\r\n").await.unwrap();
        let mut answer = vec![0u8; 256];
        let n = r.read(&mut answer).await.unwrap();
        assert!(String::from_utf8_lossy(&answer[..n]).ends_with("GET /simple/"));
        w.write_all(
            b"POST /simple/upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
        )
        .await
        .unwrap();
        let mut rest = String::new();
        r.read_to_string(&mut rest).await.unwrap();
        assert!(rest.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{rest}");
        assert!(rest.contains("\"error\":\"policy_denied\""), "{rest}");
        let refused = relay.await.unwrap().expect("a refusal");
        assert_eq!(refused.reason, "POST /simple/upload not permitted by policy");
        assert_eq!(seen.await.unwrap(), ["GET /simple/"], "the upload never reached the host");
    }

    #[tokio::test]
    async fn bodies_by_length_and_by_chunks_reach_the_host_whole() {
        let mut from = BufReader::new(&b"4\r\nwiki\r\n5;x=1\r\npedia\r\n0\r\nT: v\r\n\r\nNEXT"[..]);
        let mut to = Vec::new();
        assert!(pass_body(b"PUT / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", &mut from, &mut to).await);
        assert_eq!(to, b"4\r\nwiki\r\n5;x=1\r\npedia\r\n0\r\nT: v\r\n\r\n");
        let mut from = BufReader::new(&b"abcdefNEXT"[..]);
        let mut to = Vec::new();
        assert!(pass_body(b"PUT / HTTP/1.1\r\ncontent-length: 6\r\n\r\n", &mut from, &mut to).await);
        assert_eq!(to, b"abcdef");
        let mut short = BufReader::new(&b"abc"[..]);
        assert!(!pass_body(b"PUT / HTTP/1.1\r\nContent-Length: 6\r\n\r\n", &mut short, &mut Vec::new()).await);
    }
}
