//! The composer: a text box, Send, and Stop while an answer is written.

use leptos::prelude::*;

#[component]
pub fn Composer(
    /// Called with the text to send.
    on_send: Callback<String, ()>,
    /// Called when the person presses Stop.
    on_stop: Callback<(), ()>,
    /// True while an answer is being written.
    #[prop(into)]
    answering: Signal<bool>,
) -> impl IntoView {
    let text = RwSignal::new(String::new());
    let send = move || {
        let t = text.get_untracked();
        if t.trim().is_empty() || answering.get_untracked() {
            return;
        }
        text.set(String::new());
        on_send.run(t);
    };
    let on_key = move |ev: leptos::ev::KeyboardEvent| {
        // Enter sends; Shift+Enter makes a new line (as in other chat apps).
        if ev.key() == "Enter" && !ev.shift_key() && !ev.is_composing() {
            ev.prevent_default();
            send();
        }
    };
    view! {
        <form class="composer" on:submit=move |ev: leptos::ev::SubmitEvent| { ev.prevent_default(); send(); }>
            <label class="sr-only" for="composer-input">"Message"</label>
            <textarea id="composer-input" data-testid="composer-input" rows="3"
                placeholder="Ask anything; Enter sends, Shift+Enter adds a line"
                prop:value=move || text.get()
                on:input=move |ev| text.set(event_target_value(&ev))
                on:keydown=on_key></textarea>
            <Show
                when=move || answering.get()
                fallback=move || view! {
                    <button type="submit" class="primary" data-testid="send"
                        disabled=move || text.with(|t| t.trim().is_empty())>"Send"</button>
                }
            >
                <button type="button" class="danger" data-testid="stop" on:click=move |_| on_stop.run(())>"Stop"</button>
            </Show>
        </form>
    }
}
