//! `ToolStep`: one tool call, folded: a glyph with words for screen readers, the
//! summary, and details with the input and the result.

use lens_types::{StepStatus, ToolStep as Step};
use leptos::prelude::*;

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
}
