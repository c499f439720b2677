//! "Edit and run again": an ended run's code, edited in the unfolded step and run in the
//! conversation's sandbox (same Python, same files) as a new step under the newest
//! answer, marked as the person's; the conversation then follows it live.

use lens_types::ToolStep as Step;
use leptos::prelude::*;

use crate::context::RunAgainIn;

#[component]
pub fn RunAgain(
    /// The run whose code is edited.
    step: Signal<Step>,
    /// (chat id, message id) of the answer the run is in.
    place: Signal<(String, String)>,
) -> impl IntoView {
    let within = use_context::<RunAgainIn>();
    let editing = RwSignal::new(false);
    let code = RwSignal::new(String::new());
    let busy = RwSignal::new(false);
    let error = RwSignal::new(None::<String>);
    let field_id = move || place.with(|p| format!("run-again-{}-{}", p.1, step.with(|s| s.id.clone())));
    let answering = move || within.is_some_and(|w| w.answering.get());

    let open = move |_| {
        code.set(step.with_untracked(|s| s.output.as_ref().map(|o| o.code.clone()).unwrap_or_default()));
        error.set(None);
        editing.set(true);
    };
    let run = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let Some(within) = within else { return };
        let (cid, mid) = place.get_untracked();
        let sid = step.with_untracked(|s| s.id.clone());
        let text = code.get_untracked();
        busy.set(true);
        leptos::task::spawn_local(async move {
            match crate::api::run_again(&cid, &mid, &sid, &text).await {
                Ok(_) => {
                    editing.set(false);
                    within.reload.run(());
                }
                Err(e) => error.set(Some(e.message)),
            }
            busy.set(false);
        });
    };

    // Only ended runs of a conversation that can follow them.
    let offered = move || within.is_some() && step.with(|s| s.output.is_some());
    view! {
        <Show when=offered>
            <Show
                when=move || editing.get()
                fallback=move || view! {
                    <button type="button" class="run-again-open" data-testid="run-again" on:click=open>
                        "Edit and run again"
                    </button>
                }
            >
                <form class="run-again" data-testid="run-again-form" on:submit=run>
                    <label for=field_id>"Code to run in this conversation's sandbox"</label>
                    <textarea id=field_id class="code" data-testid="run-again-code" spellcheck="false"
                        rows=move || code.with(|c| c.lines().count().clamp(3, 20))
                        prop:value=move || code.get()
                        on:input=move |ev| code.set(event_target_value(&ev))></textarea>
                    <div class="run-again-actions">
                        <button type="submit" data-testid="run-again-go"
                            disabled=move || busy.get() || answering() || code.with(|c| c.trim().is_empty())>
                            {move || if busy.get() { "Starting…" } else { "Run" }}
                        </button>
                        <button type="button" data-testid="run-again-cancel" on:click=move |_| editing.set(false)>
                            "Cancel"
                        </button>
                        <Show when=answering>
                            <span class="muted">"An answer is being written; run once it ends."</span>
                        </Show>
                    </div>
                    <p class="error" role="alert" data-testid="run-again-error">{move || error.get().unwrap_or_default()}</p>
                </form>
            </Show>
        </Show>
    }
}
