//! Following an answer's events with the browser's `EventSource`.
//!
//! The browser reconnects a dropped stream by itself and sends `Last-Event-ID`, so the
//! server replays only what was missed. The stream is closed here on `done`, and when
//! the server refuses it (the answer is gone) the caller is told so it can reload.

use lens_types::StreamEvent;
use wasm_bindgen::{JsCast, closure::Closure};
use web_sys::{EventSource, MessageEvent};

use super::client::{ApiResult, ClientError};

const NAMES: [&str; 7] = ["step", "output", "token", "approval", "notice", "error", "done"];

/// An open stream; dropping it closes the connection.
pub struct AnswerStream {
    source: EventSource,
    _handlers: Vec<Closure<dyn FnMut(web_sys::Event)>>,
}

impl Drop for AnswerStream {
    fn drop(&mut self) {
        self.source.close();
    }
}

/// The browser would not open the stream or listen to it.
fn browser_refused(e: wasm_bindgen::JsValue) -> ClientError {
    ClientError { status: 0, code: None, message: format!("the browser refused the event stream ({e:?})") }
}

/// Opens the stream; `on_event` gets every event, `on_lost` is called once if the
/// server refuses the stream for good.
pub fn follow(
    cid: &str,
    aid: &str,
    on_event: impl Fn(StreamEvent) + 'static,
    on_lost: impl Fn() + 'static,
) -> ApiResult<AnswerStream> {
    let url = format!("/api/v1/chats/{cid}/answers/{aid}/events");
    let source = EventSource::new(&url).map_err(browser_refused)?;
    let on_event = std::rc::Rc::new(on_event);
    let mut handlers = Vec::new();
    for name in NAMES {
        let on_event = on_event.clone();
        let src = source.clone();
        let handler = Closure::<dyn FnMut(web_sys::Event)>::new(move |ev: web_sys::Event| {
            // The connection's own "error" events are plain Events; ours carry data.
            let Some(msg) = ev.dyn_ref::<MessageEvent>() else {
                return;
            };
            let Some(data) = msg.data().as_string() else {
                return;
            };
            if let Ok(event) = serde_json::from_str::<StreamEvent>(&data) {
                if event.is_last() {
                    src.close();
                }
                on_event(event);
            }
        });
        source.add_event_listener_with_callback(name, handler.as_ref().unchecked_ref()).map_err(browser_refused)?;
        handlers.push(handler);
    }
    let src = source.clone();
    let lost = Closure::<dyn FnMut(web_sys::Event)>::new(move |ev: web_sys::Event| {
        if ev.dyn_ref::<MessageEvent>().is_none() && src.ready_state() == EventSource::CLOSED {
            on_lost();
        }
    });
    source.add_event_listener_with_callback("error", lost.as_ref().unchecked_ref()).map_err(browser_refused)?;
    handlers.push(lost);
    Ok(AnswerStream { source, _handlers: handlers })
}
