//! `RunDetail`: what an unfolded step shows: its input, its output with the ending and
//! the time it took, what it reached on the network, the files it made and the download
//! of its whole output, or its
//! live output while it runs; code and output each with a Copy button, and the code
//! with "Edit and run again".

use lens_types::{RunOutput, ToolStep as Step};
use leptos::prelude::*;

use crate::{
    api::chat_file_url,
    components::{
        copy_button::CopyButton, file_chip::size_words, made_files::MadeFiles, run_again::RunAgain,
        step_input::input_text,
    },
};

/// The output as a person would paste it: stdout, then stderr when there is any.
fn output_text(o: &RunOutput) -> String {
    match (o.stdout.is_empty(), o.stderr.is_empty()) {
        (_, true) => o.stdout.clone(),
        (true, false) => o.stderr.clone(),
        (false, false) => format!("{}\n{}", o.stdout.trim_end_matches('\n'), o.stderr),
    }
}

#[component]
pub fn RunDetail(
    /// The step as last streamed or saved.
    step: Signal<Step>,
    /// Output streamed while the step runs: (stdout, stderr).
    live: Signal<Option<(String, String)>>,
    /// (chat id, message id): where the run's files download from and are shared to.
    place: Signal<(String, String)>,
) -> impl IntoView {
    let input = Signal::derive(move || step.with(input_text));
    let output = Signal::derive(move || step.with(|s| s.output.as_ref().map(output_text).unwrap_or_default()));
    view! {
        <div class="step-body">
            <div class="step-heading">
                <h4>"Input"</h4>
                <CopyButton text=input what="the code" testid="copy-code" />
            </div>
            <pre class="code" data-testid="tool-step-input">{move || input.get()}</pre>
            <RunAgain step place />
            {move || {
                step.with(|s| s.output.clone())
                    .map(|o| {
                        view! {
                            <div class="step-heading">
                                <h4>"Output"</h4>
                                <CopyButton text=output what="the output" testid="copy-output" />
                            </div>
                            <pre class="stdout" data-testid="run-stdout">{o.stdout.clone()}</pre>
                            {o.stdout_cut.then(|| view! {
                                <p class="cut-note" data-testid="stdout-cut">
                                    {format!("Showing the start of stdout: {} bytes in all.", o.stdout_bytes)}
                                </p>
                            })}
                            {(!o.stderr.is_empty()).then(|| view! {
                                <pre class="stderr" data-testid="run-stderr">{o.stderr.clone()}</pre>
                            })}
                            {o.stderr_cut.then(|| view! {
                                <p class="cut-note" data-testid="stderr-cut">
                                    {format!("Showing the end of stderr: {} bytes in all.", o.stderr_bytes)}
                                </p>
                            })}
                            <p class="ending" data-testid="run-ending">{o.ending.describe()}</p>
                            <NetworkList reached=o.network.clone() />
                            <p class="duration muted">{format!("{} · {} ms", o.language, o.duration_ms)}</p>
                            {
                                let (chat_id, message_id) = place.get_untracked();
                                let step_id = step.with_untracked(|s| s.id.clone());
                                view! {
                                    <MadeFiles chat_id=chat_id.clone() message_id step_id files=o.files.clone() />
                                    {o.log.clone().map(|log| view! {
                                        <p class="run-log">
                                            <a data-testid="run-log" href=chat_file_url(&chat_id, &log.id) download=log.name.clone()>
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
    }
}

/// What the run reached on the network, host by host: whether each was reached or
/// refused (and why), and the bytes each way where they were counted.
#[component]
fn NetworkList(reached: Vec<lens_types::NetReach>) -> impl IntoView {
    (!reached.is_empty()).then(|| {
        let rows = reached
            .into_iter()
            .map(|r| {
                let outcome = if r.allowed { "reached" } else { "refused" };
                let times = if r.connections == 1 { String::new() } else { format!(" ({} connections)", r.connections) };
                let allow = (r.allowable && !r.allowed).then(|| view! { <AllowHost host=r.host.clone() /> });
                view! {
                    <tr data-testid="network-row" data-allowed=r.allowed.to_string()>
                        <th scope="row">{format!("{}:{}", r.host, r.port)}</th>
                        <td>
                            {format!("{outcome}{times}")}<span class="muted">{format!(": {}", r.reason)}</span>
                            {allow}
                        </td>
                        <td>{bytes_words(r.bytes_sent)}</td>
                        <td>{bytes_words(r.bytes_received)}</td>
                    </tr>
                }
            })
            .collect::<Vec<_>>();
        view! {
            <table class="run-network" data-testid="run-network">
                <caption>"Network"</caption>
                <thead><tr><th scope="col">"Host"</th><th scope="col">"Outcome"</th><th scope="col">"Sent"</th><th scope="col">"Received"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        }
    })
}

/// "Allow <host> in this conversation", after saying what it does; then how to use it.
#[component]
fn AllowHost(host: String) -> impl IntoView {
    let chat = use_context::<crate::context::RunAgainIn>().map(|w| w.chat_id);
    let done = RwSignal::new(None::<Result<(), String>>);
    let busy = RwSignal::new(false);
    let label = format!("Allow {host} in this conversation");
    let host = StoredValue::new(host);
    let allow = move |_| {
        let Some(cid) = chat.and_then(|c| c.get_untracked()) else { return };
        let host = host.get_value();
        let question = format!(
            "Let runs in this conversation reach {host}? Only this conversation's sandbox may reach it; the admin's \
             list and your other conversations stay as they are."
        );
        if !crate::dialogs::confirm(&question) {
            return;
        }
        busy.set(true);
        leptos::task::spawn_local(async move {
            done.set(Some(crate::api::allow_host(&cid, &host).await.map(|_| ()).map_err(|e| e.message)));
            busy.set(false);
        });
    };
    view! {
        <Show when=move || done.with(|d| !matches!(d, Some(Ok(()))))>
            <button type="button" class="allow-host" data-testid="allow-host" on:click=allow disabled=move || busy.get()>
                {label.clone()}
            </button>
        </Show>
        {move || done.get().map(|d| match d {
            Ok(()) => view! { <p role="status" data-testid="allowed-host">"Allowed. Edit and run again to reach it."</p> }.into_any(),
            Err(e) => view! { <p class="error" role="alert">{e}</p> }.into_any(),
        })}
    }
}

/// Bytes in words, or "not counted" where the sandbox's driver does not count them.
fn bytes_words(bytes: Option<u64>) -> String {
    bytes.map_or_else(|| "not counted".to_owned(), size_words)
}
