//! `SandboxStatus`: the conversation's sandbox in its header, as it stands: running,
//! stopped (started on the next run) or none yet; its disk use; the day it is deleted if
//! nothing uses it; Restart Python (fresh names, same files) and Delete, each after a
//! question that says what is lost; and Files, the workspace browser.

use lens_types::{ChatSandboxState, ChatSandboxView};
use leptos::prelude::*;

use crate::{
    api,
    components::{file_chip::size_words, workspace_files::WorkspaceFiles},
    dates::day_of,
    dialogs,
};

/// What the person is asked before the sandbox goes.
pub const DELETE_QUESTION: &str = "Delete this conversation's sandbox? Every file in it and every name Python \
holds are lost; the conversation stays, and its next run starts a fresh sandbox.";

/// What the person is asked before Python restarts.
pub const RESTART_QUESTION: &str = "Restart Python in this conversation? The names it holds are lost; the files stay.";

/// The words for how the sandbox stands: (state, details).
pub fn describe(view: &ChatSandboxView) -> (&'static str, String) {
    let state = match view.state {
        ChatSandboxState::Running if view.busy => "running code",
        ChatSandboxState::Running => "running",
        ChatSandboxState::Stopped => "stopped (starts on the next run)",
        ChatSandboxState::Absent => "none yet (made by the first run)",
        ChatSandboxState::Off => "off",
    };
    let mut details = Vec::new();
    if matches!(view.state, ChatSandboxState::Running | ChatSandboxState::Stopped) {
        details.push(format!("{} of files", size_words(view.disk_bytes)));
    }
    if let Some(at) = view.deletes_at {
        details.push(format!("deleted on {} if unused", day_of(at)));
    }
    (state, details.join(" · "))
}

#[component]
pub fn SandboxStatus(
    /// The conversation.
    #[prop(into)]
    chat_id: Signal<Option<String>>,
    /// Changes when an answer ended (the sandbox may have started or grown).
    #[prop(into)]
    changed: Signal<u64>,
) -> impl IntoView {
    let view_of = RwSignal::new(None::<ChatSandboxView>);
    let error = RwSignal::new(None::<String>);
    let load = move |cid: String| {
        leptos::task::spawn_local(async move {
            let got = api::chat_sandbox(&cid).await;
            // The person may have moved to another conversation meanwhile.
            if chat_id.get_untracked().as_deref() != Some(cid.as_str()) {
                return;
            }
            match got {
                Ok(v) => {
                    view_of.set(Some(v));
                    error.set(None);
                }
                Err(e) => error.set(Some(e.message)),
            }
        })
    };
    // Another conversation's state is never shown under this one's title, even for the
    // moment its own loads; the same conversation's stays until the new one comes.
    let shown_for = StoredValue::new(None::<String>);
    Effect::new(move |_| {
        changed.track();
        let cid = chat_id.get();
        if shown_for.get_value() != cid {
            view_of.set(None);
            shown_for.set_value(cid.clone());
        }
        if let Some(cid) = cid {
            load(cid);
        }
    });
    // The workspace browser, open under the line; closed again in another conversation.
    let files_open = RwSignal::new(false);
    Effect::new(move |_| {
        chat_id.track();
        files_open.set(false);
    });
    let on_delete = move |_| {
        let Some(cid) = chat_id.get_untracked() else { return };
        if !dialogs::confirm(DELETE_QUESTION) {
            return;
        }
        leptos::task::spawn_local(async move {
            match api::delete_chat_sandbox(&cid).await {
                Ok(()) => {
                    files_open.set(false);
                    load(cid);
                }
                Err(e) => error.set(Some(e.message)),
            }
        });
    };
    let restarted = RwSignal::new(false);
    let on_restart = move |_| {
        let Some(cid) = chat_id.get_untracked() else { return };
        if !dialogs::confirm(RESTART_QUESTION) {
            return;
        }
        leptos::task::spawn_local(async move {
            match api::restart_python(&cid).await {
                Ok(()) => {
                    restarted.set(true);
                    error.set(None);
                }
                Err(e) => error.set(Some(e.message)),
            }
        });
    };
    Effect::new(move |_| {
        chat_id.track();
        changed.track();
        restarted.set(false);
    });
    let shown = move || view_of.get().filter(|v| v.state != ChatSandboxState::Off);
    let browser = move || {
        let cid = chat_id.get().filter(|_| files_open.get())?;
        Some(view! { <div id="workspace-browser"><WorkspaceFiles chat_id=cid changed /></div> })
    };
    view! {
        {move || shown().map(|v| {
            let (state, details) = describe(&v);
            let can_delete = matches!(v.state, ChatSandboxState::Running | ChatSandboxState::Stopped);
            view! {
                <div class="sandbox-status" data-testid="sandbox-status" data-state=format!("{:?}", v.state).to_lowercase()>
                    <span class="sandbox-state">"Sandbox: " <strong>{state}</strong></span>
                    <span class="muted" data-testid="sandbox-details">{details}</span>
                    {can_delete.then(|| view! {
                        <button type="button" data-testid="open-workspace" aria-controls="workspace-browser"
                            aria-expanded=move || files_open.get().to_string() on:click=move |_| files_open.update(|o| *o = !*o)>
                            {move || if files_open.get() { "Hide files" } else { "Files" }}
                        </button>
                    })}
                    {(v.state == ChatSandboxState::Running).then(|| view! {
                        <button type="button" data-testid="restart-python" on:click=on_restart>"Restart Python"</button>
                    })}
                    {can_delete.then(|| view! {
                        <button type="button" class="danger" data-testid="delete-sandbox" on:click=on_delete>
                            "Delete sandbox"
                        </button>
                    })}
                </div>
            }
        })}
        <Show when=move || restarted.get()>
            <p class="muted" role="status" data-testid="python-restarted">"Python restarted: the next run starts with no names."</p>
        </Show>
        {browser}
        <Show when=move || error.get().is_some()>
            <p class="error" role="alert">{move || error.get().unwrap_or_default()}</p>
        </Show>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sandbox_reads_plainly() {
        let view = ChatSandboxView {
            state: ChatSandboxState::Stopped,
            disk_bytes: 3_400_000,
            busy: false,
            last_used_at: Some(0),
            deletes_at: Some(1_796_515_200_000),
        };
        assert_eq!(
            describe(&view),
            ("stopped (starts on the next run)", "3.4 MB of files · deleted on 2026-12-06 if unused".into())
        );
        let none = ChatSandboxView {
            state: ChatSandboxState::Absent,
            disk_bytes: 0,
            busy: false,
            last_used_at: None,
            deletes_at: None,
        };
        assert_eq!(describe(&none), ("none yet (made by the first run)", String::new()));
    }
}
