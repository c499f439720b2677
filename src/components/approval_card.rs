//! `ApprovalCard`: the question of a step that asks first, with Approve and Decline;
//! then the decision.

use lens_types::ToolStep as Step;
use leptos::prelude::*;

use crate::components::step_input::input_text;

/// The question of a step that asks first, with Approve and Decline; then the decision.
/// It sits beside the folded step (not in it), so the person sees it without opening it.
#[component]
pub fn ApprovalCard(step: Signal<Step>) -> impl IntoView {
    let error = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    let decide = move |approve: bool| {
        let Some(id) = step.with_untracked(|s| s.approval.as_ref().map(|a| a.id.clone())) else { return };
        busy.set(true);
        leptos::task::spawn_local(async move {
            if let Err(e) = crate::api::decide_approval(&id, approve).await {
                error.set(Some(e.message));
            }
            busy.set(false);
        });
    };
    move || {
        let (approval, input) = step.with(|s| (s.approval.clone(), input_text(s)));
        approval.map(|a| match a.approved {
            None => view! {
                <div class="approval" role="group" aria-label="Approval needed" data-testid="approval-card">
                    <p class="question">{a.question.clone()}</p>
                    <pre class="code" data-testid="approval-code">{input}</pre>
                    <button type="button" class="primary" data-testid="approve" disabled=move || busy.get()
                        on:click=move |_| decide(true)>"Approve"</button>
                    <button type="button" data-testid="decline" disabled=move || busy.get()
                        on:click=move |_| decide(false)>"Decline"</button>
                    <p class="error" role="alert">{move || error.get().unwrap_or_default()}</p>
                </div>
            }
            .into_any(),
            Some(yes) => view! {
                <p class="approval-decided muted" data-testid="approval-decided">
                    {if yes { "You approved this." } else { "You declined this." }}
                </p>
            }
            .into_any(),
        })
    }
}
