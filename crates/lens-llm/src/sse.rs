//! A small Server-Sent Events reader over a byte stream, shared by the HTTP providers.

use bytes::Bytes;
use futures_util::{Stream, StreamExt};

use crate::LlmError;

/// One SSE frame: its `event:` name (if any) and its joined `data:` lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Frame {
    pub event: Option<String>,
    pub data: String,
}

/// Splits a byte stream into frames. Bytes are buffered until a whole line arrives, so
/// a UTF-8 character or a JSON object split across chunks is read whole. The stream
/// ends when the body does; a transport error ends it with `Err`.
pub(crate) fn frames<S>(body: S) -> impl Stream<Item = Result<Frame, LlmError>> + Send
where
    S: Stream<Item = Result<Bytes, reqwest::Error>> + Send + Unpin + 'static,
{
    struct State<S> {
        body: S,
        buf: Vec<u8>,
        event: Option<String>,
        data: Vec<String>,
        done: bool,
    }
    let state = State { body, buf: Vec::new(), event: None, data: Vec::new(), done: false };
    futures_util::stream::unfold(state, |mut st| async move {
        loop {
            // Drain whole lines already buffered.
            while let Some(pos) = st.buf.iter().position(|&b| b == b'\n') {
                let mut line: Vec<u8> = st.buf.drain(..=pos).collect();
                line.pop();
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                let line = match String::from_utf8(line) {
                    Ok(l) => l,
                    Err(_) => {
                        st.done = true;
                        return Some((Err(LlmError::Protocol("stream is not UTF-8".into())), st));
                    }
                };
                if line.is_empty() {
                    if st.data.is_empty() && st.event.is_none() {
                        continue;
                    }
                    let frame = Frame { event: st.event.take(), data: std::mem::take(&mut st.data).join("\n") };
                    return Some((Ok(frame), st));
                }
                if line.starts_with(':') {
                    continue;
                }
                let (field, value) = match line.split_once(':') {
                    Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
                    None => (line.as_str(), ""),
                };
                match field {
                    "event" => st.event = Some(value.to_owned()),
                    "data" => st.data.push(value.to_owned()),
                    _ => {}
                }
            }
            if st.done {
                return None;
            }
            match st.body.next().await {
                Some(Ok(chunk)) => st.buf.extend_from_slice(&chunk),
                Some(Err(e)) => {
                    st.done = true;
                    tracing::debug!(error = %e, "model stream broke");
                    return Some((Err(LlmError::StreamCut), st));
                }
                None => {
                    st.done = true;
                    // A last frame without its blank line still counts.
                    if !st.buf.is_empty() {
                        st.buf.push(b'\n');
                    }
                    st.buf.push(b'\n');
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn read(chunks: &[&str]) -> Vec<Frame> {
        let owned: Vec<Result<Bytes, reqwest::Error>> = chunks.iter().map(|c| Ok(Bytes::from(c.to_string()))).collect();
        frames(futures_util::stream::iter(owned)).map(|f| f.unwrap()).collect().await
    }

    #[tokio::test]
    async fn joins_lines_split_across_chunks() {
        let got = read(&["event: a\nda", "ta: {\"x\":", "1}\n\n: comment\ndata: é", "\n\n"]).await;
        assert_eq!(got.len(), 2);
        assert_eq!(got[0], Frame { event: Some("a".into()), data: "{\"x\":1}".into() });
        assert_eq!(got[1].data, "é");
    }

    #[tokio::test]
    async fn last_frame_without_blank_line_counts() {
        let got = read(&["data: [DONE]"]).await;
        assert_eq!(got, vec![Frame { event: None, data: "[DONE]".into() }]);
    }
}
