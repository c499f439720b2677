//! `ToolStep`: one tool call, folded: a glyph with words for screen readers, the
//! summary, and beneath it what a person looks for without opening it: the last lines
//! of a running step's output and the images a run made; once ended, how much of the
//! model's context its result took (and whether it was cut to fit), what it reached on the
//! network, and whether the person ran it (an edited run) rather than the model. Unfolded, [`RunDetail`]
//! shows the input, the output, the files and the whole output's download.

use lens_types::{StepStatus, ToolStep as Step};
use leptos::prelude::*;

use crate::components::{live_tail::LiveTail, run_detail::RunDetail, run_images::RunImages};

/// The glyph and the words a screen reader says instead.
pub fn status_glyph(status: StepStatus) -> (&'static str, &'static str) {
    match status {
        StepStatus::Succeeded => ("✓", "succeeded"),
        StepStatus::Failed => ("✕", "failed"),
        StepStatus::Running => ("◆", "running"),
        StepStatus::Pending => ("◆", "waiting for your approval"),
    }
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
    let running_live = Signal::derive(move || live.get().filter(|_| step.with(|s| s.output.is_none())));
    // A memo, so the images are made once and not again at every later event.
    let made = Memo::new(move |_| step.with(|s| s.output.as_ref().map(|o| o.images.clone()).unwrap_or_default()));
    let images = move || view! { <RunImages chat_id=place.with_untracked(|p| p.0.clone()) images=made.get() /> };
    view! {
        <div class=class data-testid="tool-step" data-status=words
            id=move || format!("step-{}-{}", place.with(|p| p.1.clone()), step.with(|s| s.id.clone()))>
            <details>
                <summary>
                    <span class="glyph" aria-hidden="true">{glyph}</span>
                    <span class="sr-only">{move || format!("Step {}: ", words())}</span>
                    <span class="summary" data-testid="tool-step-summary">{move || step.with(|s| s.summary.clone())}</span>
                    {move || step.with(|s| s.by_person.is_some()).then(|| view! {
                        <span class="step-by-person" data-testid="step-by-person">"run by you, edited"</span>
                    })}
                    {move || step.with(|s| s.context).map(|used| view! {
                        <span class="step-context" data-testid="step-context" data-cut=used.cut.to_string()>
                            {used.describe()}
                        </span>
                    })}
                </summary>
                <RunDetail step live place />
            </details>
            {move || step.with(|s| s.output.as_ref().and_then(|o| o.network_line())).map(|line| view! {
                <p class="step-network muted" data-testid="step-network">{line}</p>
            })}
            <LiveTail live=running_live />
            {images}
        </div>
    }
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use lens_types::{MadeFile, RunEnding, RunOutput, SharedFileRef};

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
                network: Vec::new(),
            }),
            file: None,
            approval: None,
            context: Some(lens_types::ContextUse { tokens: 3_010, window: 32_768, cut: true }),
            by_person: None,
        };
        let html = view! { <ToolStep step /> }.to_html();
        let folded = html.split("</summary>").next().unwrap_or_default();
        assert!(folded.contains("about 3.0k tokens of the model") && folded.contains("(9%), cut to fit"), "{html}");
        assert!(html.contains("<details>"), "folded: {html}");
        assert!(html.contains("Step succeeded: "), "{html}");
        assert!(html.contains("✓"), "{html}");
        assert!(!html.contains("<script>"), "{html}");
        assert!(html.contains("&lt;script&gt;x&lt;/script&gt;"), "{html}");
        assert!(html.contains("exited normally"), "{html}");
    }

    /// A Python run that ended, printing `1`.
    fn ended_run() -> Step {
        Step {
            id: "s2".into(),
            tool: "run_python".into(),
            args: serde_json::json!({"code": "print(x)"}),
            summary: "Run Python: print(x)".into(),
            status: StepStatus::Succeeded,
            result: None,
            output: Some(RunOutput {
                language: "python".into(),
                code: "print(x)".into(),
                stdout: "1".into(),
                stderr: String::new(),
                stdout_cut: false,
                stderr_cut: false,
                stdout_bytes: 1,
                stderr_bytes: 0,
                ending: RunEnding::Exited { code: 0 },
                duration_ms: 3,
                files: vec![],
                images: vec![],
                log: None,
                network: Vec::new(),
            }),
            file: None,
            approval: None,
            context: None,
            by_person: None,
        }
    }

    #[test]
    fn a_run_shows_what_it_reached_folded_and_the_list_unfolded() {
        let owner = Owner::new();
        owner.set();
        let mut step = ended_run();
        let reach = |host: &str, allowed: bool, reason: &str| lens_types::NetReach {
            host: host.into(),
            port: 443,
            allowed,
            reason: reason.into(),
            connections: 2,
            bytes_sent: Some(1_200),
            bytes_received: Some(2_500_000),
            allowable: false,
        };
        if let Some(o) = step.output.as_mut() {
            o.network = vec![
                reach("files.example.org", true, "connected to 192.0.2.1:443"),
                reach("<b>evil</b>", false, "`<b>evil</b>` is not on the sandbox's list of allowed hosts"),
                lens_types::NetReach { allowable: true, ..reach("data.example.org", false, "not listed") },
            ];
        }
        let html = view! { <ToolStep step /> }.to_html();
        let folded = html.split("</details>").nth(1).unwrap_or_default();
        assert!(folded.contains("reached files.example.org; 2 refused"), "{html}");
        assert_eq!(html.matches("data-testid=\"allow-host\"").count(), 1, "only where the person may: {html}");
        assert!(html.contains("Allow data.example.org in this conversation"), "{html}");
        assert!(html.contains("data-testid=\"run-network\"") && html.contains("2.5 MB"), "{html}");
        assert!(html.contains("refused (2 connections)") && !html.contains("<b>evil"), "{html}");
    }

    #[test]
    fn an_ended_run_offers_edit_and_run_again_where_the_conversation_can_follow_it() {
        let owner = Owner::new();
        owner.set();
        let mut step = ended_run();
        let html = view! { <ToolStep step=step.clone() /> }.to_html();
        assert!(!html.contains("run-again") && !html.contains("run by you"), "nowhere to follow it: {html}");
        provide_context(crate::context::RunAgainIn {
            reload: Callback::new(|()| {}),
            answering: Signal::derive(|| false),
            chat_id: Signal::derive(|| Some("c1".to_string())),
        });
        step.by_person = Some(lens_types::PersonRun {
            message_id: "m1".into(),
            step_id: "s1".into(),
            answer_was: lens_types::MessageStatus::Complete,
        });
        let html = view! { <ToolStep step=step.clone() /> }.to_html();
        assert!(html.contains("data-testid=\"run-again\"") && html.contains("Edit and run again"), "{html}");
        assert!(html.contains("run by you, edited"), "{html}");
        // A run still going offers nothing yet.
        step.output = None;
        step.status = StepStatus::Running;
        let html = view! { <ToolStep step /> }.to_html();
        assert!(!html.contains("Edit and run again"), "{html}");
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
                network: Vec::new(),
            }),
            file: None,
            approval: None,
            context: None,
            by_person: None,
        };
        let place = Signal::derive(|| ("c1".to_string(), "m1".to_string()));
        let html = view! { <ToolStep step place /> }.to_html();
        assert!(html.contains("src=\"/api/v1/chats/c1/files/img1?inline=true\""), "{html}");
        let folded = html.split("</details>").nth(1).unwrap_or_default();
        assert!(folded.contains("data-testid=\"run-image\""), "the image is beneath the folded step: {html}");
        assert!(html.contains("data-testid=\"copy-code\"") && html.contains("data-testid=\"copy-output\""), "{html}");
        assert!(html.contains("alt=\"Image the run made: chart.png\""), "{html}");
        assert!(html.contains("data-testid=\"share-file\""), "chart.png can be shared: {html}");
        assert!(html.contains("href=\"/api/v1/chats/c1/files/f9\""), "data.csv was shared: {html}");
        assert!(html.contains("href=\"/api/v1/chats/c1/files/log1\""), "{html}");
        assert!(html.contains("Download the whole output (3 KB)"), "{html}");
    }

    #[test]
    fn a_running_step_shows_its_last_lines_beneath_the_fold_until_it_ends() {
        let owner = Owner::new();
        owner.set();
        let step = RwSignal::new(Step {
            id: "s1".into(),
            tool: "run_python".into(),
            args: serde_json::json!({"code": "loop()"}),
            summary: "Run Python".into(),
            status: StepStatus::Running,
            result: None,
            output: None,
            file: None,
            approval: None,
            context: None,
            by_person: None,
        });
        let lines: String = (1..=9).map(|i| format!("tick {i}\n")).collect();
        let live = Signal::derive(move || Some((lines.clone(), "warn <b>\n".to_string())));
        let html = view! { <ToolStep step live /> }.to_html();
        let folded = html.split("</details>").nth(1).unwrap_or_default();
        assert!(folded.contains("tick 7\ntick 8\ntick 9") && !folded.contains("tick 6"), "{html}");
        assert!(folded.contains("warn &lt;b&gt;"), "stderr's last line, as text: {html}");
        step.update(|s| s.status = StepStatus::Succeeded);
        step.update(|s| {
            s.output = Some(RunOutput {
                language: "python".into(),
                code: "loop()".into(),
                stdout: "done".into(),
                stderr: String::new(),
                stdout_cut: false,
                stderr_cut: false,
                stdout_bytes: 4,
                stderr_bytes: 0,
                ending: RunEnding::Exited { code: 0 },
                duration_ms: 3,
                files: vec![],
                images: vec![],
                log: None,
                network: Vec::new(),
            })
        });
        let html = view! { <ToolStep step live /> }.to_html();
        assert!(!html.contains("live-tail"), "an ended step has no live tail: {html}");
    }
}
