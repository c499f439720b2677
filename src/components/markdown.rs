//! Model text rendered from Markdown, with raw HTML escaped and unsafe links removed.
//!
//! While an answer streams, its text changes at every token, and each change would render
//! the whole answer again: a long answer cost its length times its tokens. Renders are
//! paced instead: at most one per animation frame, and after a render that took `t`, the
//! next waits at least `2t`, so rendering uses at most a third of the page's time however
//! long the answer and however fast its tokens come. The last text is always rendered.

use std::time::Duration;

use leptos::prelude::*;

/// Renders `src` as Markdown.
#[component]
pub fn Markdown(
    /// The Markdown source.
    #[prop(into)]
    src: Signal<String>,
) -> impl IntoView {
    let rendered = src.with_untracked(|s| s.len());
    let html = RwSignal::new(crate::markdown::to_html(&src.get_untracked()));
    let pace = StoredValue::new(Pace { pending: false, next_at: 0.0, rendered });
    Effect::new(move |_| {
        // A text of the length already rendered is that text: answers only grow, and a
        // message's text is replaced whole only when it is another message.
        if src.with(|s| s.len()) != pace.with_value(|p| p.rendered) {
            schedule(src, html, pace);
        }
    });
    view! { <div class="markdown" inner_html=html></div> }
}

/// When the next render may happen.
struct Pace {
    /// A render is already asked for; it will read the text as it is then.
    pending: bool,
    /// The earliest time (ms since the page's start) of the next render.
    next_at: f64,
    /// The length of the text last rendered.
    rendered: usize,
}

fn schedule(src: Signal<String>, html: RwSignal<String>, pace: StoredValue<Pace>) {
    if pace.with_value(|p| p.pending) {
        return;
    }
    pace.update_value(|p| p.pending = true);
    let render = move || {
        request_animation_frame(move || {
            let start = now();
            let text = src.get_untracked();
            html.set(crate::markdown::to_html(&text));
            let end = now();
            pace.update_value(|p| {
                *p = Pace { pending: false, next_at: end + 2.0 * (end - start), rendered: text.len() }
            });
            // Text that came while this render ran gets its own.
            if text.len() != src.with_untracked(|s| s.len()) {
                schedule(src, html, pace);
            }
        })
    };
    let wait = pace.with_value(|p| p.next_at) - now();
    if wait > 1.0 {
        set_timeout(render, Duration::from_millis(wait as u64));
    } else {
        render();
    }
}

/// Milliseconds, for pacing only.
fn now() -> f64 {
    js_sys::Date::now()
}
