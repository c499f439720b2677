//! Drives a provider's SSE frames through its turn parser into a [`ModelStream`].
//!
//! Each HTTP provider only says how to read one frame and whether the body may end
//! where it did; buffering, ordering and the single closing error live here once.

use bytes::Bytes;
use futures_util::{Stream, StreamExt};

use crate::{LlmError, ModelEvent, ModelStream, sse};

/// How one provider reads its stream.
pub(crate) trait TurnParser: Send + 'static {
    /// Reads one frame into `out`; `Ok(true)` when it was the provider's end marker.
    fn frame(&mut self, frame: &sse::Frame, out: &mut Vec<ModelEvent>) -> Result<bool, LlmError>;

    /// The body ended without the end marker: flush what may be flushed, or say why not.
    fn end(&mut self, out: &mut Vec<ModelEvent>) -> Result<(), LlmError>;
}

/// The events of one turn; after an error the stream ends.
pub(crate) fn drive<S, P>(body: S, parser: P) -> ModelStream
where
    S: Stream<Item = Result<Bytes, reqwest::Error>> + Send + Unpin + 'static,
    P: TurnParser,
{
    let start = (Box::pin(sse::frames(body)), parser, Vec::new().into_iter(), false);
    Box::pin(futures_util::stream::unfold(start, |(mut frames, mut parser, mut pending, mut over)| async move {
        loop {
            if let Some(event) = pending.next() {
                return Some((Ok(event), (frames, parser, pending, over)));
            }
            if over {
                return None;
            }
            let mut out = Vec::new();
            let step = match frames.next().await {
                None => {
                    over = true;
                    parser.end(&mut out)
                }
                Some(Err(e)) => Err(e),
                Some(Ok(frame)) => parser.frame(&frame, &mut out).map(|last| over = last),
            };
            if let Err(e) = step {
                return Some((Err(e), (frames, parser, Vec::new().into_iter(), true)));
            }
            pending = out.into_iter();
        }
    }))
}
