//! "Run the gateway on this machine": what it needs, the exact command (or, when Lens
//! was given a host helper, Lens asks it to start the gateway), then waiting for the
//! gateway to answer and turning the sandbox on there.

use lens_types::{GatewayPreflight, SandboxBackend, SandboxSettingsView, UpdateSandboxSettingsRequest};
use leptos::prelude::*;

use crate::{api, components::copy_button::CopyButton, pages::sandbox_check_list::CheckList};

/// How long between two tries while waiting for the gateway.
const RETRY_MS: i32 = 5_000;

#[component]
pub fn GatewayPreflightPanel(on_ready: Callback<SandboxSettingsView>) -> impl IntoView {
    let preflight = RwSignal::new(None::<GatewayPreflight>);
    let waiting = RwSignal::new(false);
    let note = RwSignal::new(None::<String>);
    let open = move |_| {
        leptos::task::spawn_local(async move {
            match api::gateway_preflight().await {
                Ok(p) => preflight.set(Some(p)),
                Err(e) => note.set(Some(e.message)),
            }
        });
    };
    // Starts waiting, or stops.
    let wait = move |_| {
        if waiting.get_untracked() {
            return waiting.set(false);
        }
        let Some(p) = preflight.get_untracked() else { return };
        waiting.set(true);
        leptos::task::spawn_local(async move {
            // With a host helper, Lens starts the gateway itself first.
            if p.helper {
                note.set(Some("Asking the host helper to start the gateway…".into()));
                if let Err(e) = api::start_gateway().await {
                    note.set(Some(e.message));
                    return waiting.set(false);
                }
            }
            let req = UpdateSandboxSettingsRequest {
                enabled: Some(true),
                backend: Some(SandboxBackend::Gateway),
                gateway_address: Some(p.address.clone()),
                gateway_cert_dir: Some(p.cert_dir.clone()),
                gateway_server_name: Some(String::new()),
                ..Default::default()
            };
            let mut tries = 0;
            while waiting.get_untracked() {
                tries += 1;
                match api::update_sandbox_settings(&req).await {
                    Ok(v) => {
                        note.set(Some(format!("The gateway at {} answered: sandboxes now run on it.", p.address)));
                        waiting.set(false);
                        return on_ready.run(v);
                    }
                    Err(e) => {
                        note.set(Some(format!("Waiting for the gateway at {} (try {tries}): {}", p.address, e.message)))
                    }
                }
                sleep(RETRY_MS).await;
            }
        });
    };
    let items = Signal::derive(move || preflight.with(|p| p.as_ref().map(|p| p.items.clone()).unwrap_or_default()));
    let command = Signal::derive(move || preflight.with(|p| p.as_ref().map(|p| p.command.clone()).unwrap_or_default()));
    let ready = move || preflight.with(|p| p.as_ref().is_some_and(|p| p.ok));
    let helper = move || preflight.with(|p| p.as_ref().is_some_and(|p| p.helper));
    view! {
        <div class="preflight" data-testid="gateway-preflight">
            <button type="button" data-testid="gateway-preflight-open" on:click=open>
                "Run the gateway on this machine"
            </button>
            <div hidden=move || preflight.with(Option::is_none)>
                <CheckList title="What the gateway needs here" items=items testid="gateway-preflight-items" />
                <p class="failed" hidden=ready>"Fix what is missing above, then open this again."</p>
                <div hidden=move || !ready()>
                    <div hidden=helper>
                        <p>"On the server, beside compose.yaml, run:"</p>
                        <pre><code data-testid="gateway-command">{move || command.get()}</code></pre>
                        <CopyButton text=command what="the command" testid="copy-gateway-command" />
                    </div>
                    <button type="button" class="primary" data-testid="gateway-wait" on:click=wait>
                        {move || match (waiting.get(), helper()) {
                            (true, _) => "Stop waiting",
                            (false, true) => "Start the gateway and wait for it",
                            (false, false) => "I ran it: wait for the gateway",
                        }}
                    </button>
                </div>
            </div>
            <p role="status" data-testid="gateway-preflight-status">{move || note.get().unwrap_or_default()}</p>
        </div>
    }
}

/// Waits `ms` milliseconds without blocking the page.
async fn sleep(ms: i32) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        if let Some(window) = web_sys::window() {
            let _ = window.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms);
        }
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}
