//! `ToolStep`: one tool call, folded: a glyph with words for screen readers, the
//! summary, and details with the input and the result. A run's detail also shows the
//! images it made, the files it made (each with a Share button) and, when its output
//! was cut, a download of the whole of it.

use lens_types::{MadeFile, ShareFileRequest, SharedFileRef, StepStatus, ToolStep as Step};
use leptos::prelude::*;

use crate::components::shared_files::{FileChip, file_url, size_words};

/// The glyph and the words a screen reader says instead.
pub fn status_glyph(status: StepStatus) -> (&'static str, &'static str) {
    match status {
        StepStatus::Succeeded => ("✓", "succeeded"),
        StepStatus::Failed => ("✕", "failed"),
        StepStatus::Running => ("◆", "running"),
        StepStatus::Pending => ("◆", "waiting for your approval"),
    }
}

/// The input a person reads: the code for run tools, else the arguments as JSON.
fn input_text(step: &Step) -> String {
    for key in ["code", "command"] {
        if let Some(code) = step.args.get(key).and_then(|v| v.as_str()) {
            return code.to_owned();
        }
    }
    serde_json::to_string_pretty(&step.args).unwrap_or_default()
}

#[component]
pub fn ToolStep(
    /// The step as last streamed or saved.
    #[prop(into)]
    step: Signal<Step>,
    /// Output streamed while the step runs: (stdout, stderr).
    #[prop(into, optional)]
    live: Signal<Option<(String, String)>>,
    /// (chat id, message id): where the run's files download from and are shared to.
    #[prop(into, optional)]
    place: Signal<(String, String)>,
) -> impl IntoView {
    let status = move || step.with(|s| s.status);
    let glyph = move || status_glyph(status()).0;
    let words = move || status_glyph(status()).1;
    let class = move || format!("tool-step status-{}", words().split(' ').next().unwrap_or(""));
    view! {
        <details class=class data-testid="tool-step" data-status=words>
            <summary>
                <span class="glyph" aria-hidden="true">{glyph}</span>
                <span class="sr-only">{move || format!("Step {}: ", words())}</span>
                <span class="summary" data-testid="tool-step-summary">{move || step.with(|s| s.summary.clone())}</span>
            </summary>
            <div class="step-body">
                <h4>"Input"</h4>
                <pre class="code" data-testid="tool-step-input">{move || step.with(input_text)}</pre>
                {move || {
                    step.with(|s| s.output.clone())
                        .map(|o| {
                            view! {
                                <h4>"Output"</h4>
                                <pre class="stdout" data-testid="run-stdout">{o.stdout.clone()}</pre>
                                {o.stdout_cut.then(|| view! {
                                    <p class="cut-note" data-testid="stdout-cut">
                                        {format!("Showing the start of stdout: {} bytes in all.", o.stdout_bytes)}
                                    </p>
                                })}
                                <Show when={
                                    let has = !o.stderr.is_empty();
                                    move || has
                                }>
                                    <pre class="stderr" data-testid="run-stderr">{o.stderr.clone()}</pre>
                                </Show>
                                {o.stderr_cut.then(|| view! {
                                    <p class="cut-note" data-testid="stderr-cut">
                                        {format!("Showing the end of stderr: {} bytes in all.", o.stderr_bytes)}
                                    </p>
                                })}
                                <p class="ending" data-testid="run-ending">{o.ending.describe()}</p>
                                <p class="duration muted">{format!("{} · {} ms", o.language, o.duration_ms)}</p>
                                {
                                    let (chat_id, message_id) = place.get_untracked();
                                    let step_id = step.with_untracked(|s| s.id.clone());
                                    view! {
                                        <RunImages chat_id=chat_id.clone() images=o.images.clone() />
                                        <MadeFiles chat_id=chat_id.clone() message_id step_id files=o.files.clone() />
                                        {o.log.clone().map(|log| view! {
                                            <p class="run-log">
                                                <a data-testid="run-log" href=file_url(&chat_id, &log.id) download=log.name.clone()>
                                                    {format!("Download the whole output ({})", size_words(log.size))}
                                                </a>
                                            </p>
                                        })}
                                    }
                                }
                            }
                        })
                }}
                {move || {
                    let finished = step.with(|s| s.output.is_some());
                    live.get()
                        .filter(|_| !finished)
                        .map(|(out, err)| {
                            view! {
                                <h4>"Live output"</h4>
                                <pre class="stdout" data-testid="live-stdout">{out}</pre>
                                <pre class="stderr" data-testid="live-stderr">{err}</pre>
                            }
                        })
                }}
                {move || {
                    step.with(|s| if s.output.is_none() { s.result.clone() } else { None })
                        .map(|r| view! { <h4>"Result"</h4><pre class="result" data-testid="tool-step-result">{r}</pre> })
                }}
            </div>
        </details>
    }
}

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

/// Images a run made, shown inline. Served by Lens as images only (never as markup),
/// so an SVG cannot run script here.
#[component]
fn RunImages(chat_id: String, images: Vec<SharedFileRef>) -> impl IntoView {
    (!images.is_empty()).then(|| {
        view! {
            <div class="run-images">
                {images.into_iter().map(|img| view! {
                    <img data-testid="run-image" loading="lazy" alt=format!("Image the run made: {}", img.name)
                        src=format!("{}?inline=true", file_url(&chat_id, &img.id)) />
                }).collect_view()}
            </div>
        }
    })
}

/// The files a run made, each with a Share button (or its download once shared).
#[component]
fn MadeFiles(chat_id: String, message_id: String, step_id: String, files: Vec<MadeFile>) -> impl IntoView {
    (!files.is_empty()).then(|| {
        let rows = files
            .into_iter()
            .map(|f| {
                let shared = RwSignal::new(f.shared.clone());
                let error = RwSignal::new(None::<String>);
                let busy = RwSignal::new(false);
                let req = ShareFileRequest {
                    path: f.path.clone(),
                    name: None,
                    message_id: (!message_id.is_empty()).then(|| message_id.clone()),
                    step_id: Some(step_id.clone()),
                };
                let cid = chat_id.clone();
                let share = move |_| {
                    let (req, cid) = (req.clone(), cid.clone());
                    busy.set(true);
                    leptos::task::spawn_local(async move {
                        match crate::api::share_file(&cid, &req).await {
                            Ok(file) => shared.set(Some(file)),
                            Err(e) => error.set(Some(e.message)),
                        }
                        busy.set(false);
                    });
                };
                let cid = chat_id.clone();
                let path = f.path.clone();
                view! {
                    <li data-testid="made-file">
                        <span class="path">{f.path.clone()}</span>" "
                        <span class="muted">{format!("({})", size_words(f.size))}</span>" "
                        {move || match shared.get() {
                            Some(file) => view! { <FileChip chat_id=cid.clone() file /> }.into_any(),
                            None => view! {
                                <button type="button" data-testid="share-file" on:click=share.clone() disabled=move || busy.get()
                                    aria-label=format!("Share {path}")>"Share"</button>
                            }.into_any(),
                        }}
                        <span class="error" role="alert">{move || error.get().unwrap_or_default()}</span>
                    </li>
                }
            })
            .collect_view();
        view! {
            <h4>"Files made"</h4>
            <ul class="made-files" data-testid="made-files">{rows}</ul>
        }
    })
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use lens_types::{RunEnding, RunOutput};

    use super::*;

    #[test]
    fn renders_folded_with_words_and_escaped_output() {
        let owner = Owner::new();
        owner.set();
        let step = Step {
            id: "s1".into(),
            tool: "run_bash".into(),
            args: serde_json::json!({"command": "echo '<script>x</script>'"}),
            summary: "Run bash".into(),
            status: StepStatus::Succeeded,
            result: None,
            output: Some(RunOutput {
                language: "bash".into(),
                code: "echo".into(),
                stdout: "<script>x</script>".into(),
                stderr: String::new(),
                stdout_cut: false,
                stderr_cut: false,
                stdout_bytes: 18,
                stderr_bytes: 0,
                ending: RunEnding::Exited { code: 0 },
                duration_ms: 3,
                files: vec![],
                images: vec![],
                log: None,
            }),
            file: None,
            approval: None,
        };
        let html = view! { <ToolStep step /> }.to_html();
        assert!(html.contains("<details") && !html.contains("open"), "{html}");
        assert!(html.contains("Step succeeded: "), "{html}");
        assert!(html.contains("✓"), "{html}");
        assert!(!html.contains("<script>"), "{html}");
        assert!(html.contains("&lt;script&gt;x&lt;/script&gt;"), "{html}");
        assert!(html.contains("exited normally"), "{html}");
    }

    #[test]
    fn a_run_shows_its_images_files_and_log_by_their_download_paths() {
        let owner = Owner::new();
        owner.set();
        let file = |id: &str, name: &str| SharedFileRef {
            id: id.into(),
            name: name.into(),
            size: 2048,
            mime: "image/png".into(),
        };
        let step = Step {
            id: "s1".into(),
            tool: "run_python".into(),
            args: serde_json::json!({"code": "plot()"}),
            summary: "Run Python".into(),
            status: StepStatus::Succeeded,
            result: None,
            output: Some(RunOutput {
                language: "python".into(),
                code: "plot()".into(),
                stdout: String::new(),
                stderr: String::new(),
                stdout_cut: true,
                stderr_cut: false,
                stdout_bytes: 9_000_000,
                stderr_bytes: 0,
                ending: RunEnding::Exited { code: 0 },
                duration_ms: 3,
                files: vec![
                    MadeFile { path: "chart.png".into(), size: 2048, shared: None },
                    MadeFile { path: "data.csv".into(), size: 10, shared: Some(file("f9", "data.csv")) },
                ],
                images: vec![file("img1", "chart.png")],
                log: Some(file("log1", "python-run-output.log")),
            }),
            file: None,
            approval: None,
        };
        let place = Signal::derive(|| ("c1".to_string(), "m1".to_string()));
        let html = view! { <ToolStep step place /> }.to_html();
        assert!(html.contains("src=\"/api/v1/chats/c1/files/img1?inline=true\""), "{html}");
        assert!(html.contains("alt=\"Image the run made: chart.png\""), "{html}");
        assert!(html.contains("data-testid=\"share-file\""), "chart.png can be shared: {html}");
        assert!(html.contains("href=\"/api/v1/chats/c1/files/f9\""), "data.csv was shared: {html}");
        assert!(html.contains("href=\"/api/v1/chats/c1/files/log1\""), "{html}");
        assert!(html.contains("Download the whole output (3 KB)"), "{html}");
    }
}
