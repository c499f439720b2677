//! Settings > Code sandbox > where sandboxes run: this machine, or an OpenShell gateway
//! with its address, certificate folder and TLS server name, and its last check.

use lens_types::SandboxSettingsView;
use leptos::prelude::*;

use crate::pages::gateway_preflight::GatewayPreflightPanel;

/// The place's fields; the form around them saves them with the rest.
#[component]
pub fn SandboxPlace(
    view_sig: RwSignal<Option<SandboxSettingsView>>,
    backend: RwSignal<String>,
    address: RwSignal<String>,
    cert_dir: RwSignal<String>,
    server_name: RwSignal<String>,
    /// Called with the settings once the gateway started here answers.
    on_ready: Callback<SandboxSettingsView>,
) -> impl IntoView {
    let locked = move |field: &str| view_sig.with(|v| v.as_ref().is_some_and(|v| v.locked.iter().any(|l| l == field)));
    let on_gateway = move || backend.get() == "gateway";
    let check = move || view_sig.with(|v| v.as_ref().and_then(|v| v.gateway_check.clone()));
    view! {
        <fieldset class="place" data-testid="sandbox-place">
            <legend>"Where sandboxes run"</legend>
            <label class="check">
                <input type="radio" name="sandbox-backend" value="local" data-testid="sandbox-backend-local"
                    disabled=move || locked("backend")
                    prop:checked=move || !on_gateway() on:change=move |_| backend.set("local".into()) />
                "This machine (bubblewrap)"
            </label>
            <label class="check">
                <input type="radio" name="sandbox-backend" value="gateway" data-testid="sandbox-backend-gateway"
                    disabled=move || locked("backend")
                    prop:checked=on_gateway on:change=move |_| backend.set("gateway".into()) />
                "An OpenShell gateway"
            </label>
            <Show when=on_gateway>
                <label>"Gateway address (host:port)"
                    <input type="text" data-testid="sandbox-gateway-address" placeholder="openshell-gateway:17670"
                        disabled=move || locked("gateway_address")
                        prop:value=move || address.get() on:input=move |ev| address.set(event_target_value(&ev)) />
                </label>
                <label>"Certificate folder on the server (ca.crt, client/tls.crt, client/tls.key)"
                    <input type="text" data-testid="sandbox-gateway-certs" placeholder="/var/lib/lens/openshell"
                        disabled=move || locked("gateway_cert_dir")
                        prop:value=move || cert_dir.get() on:input=move |ev| cert_dir.set(event_target_value(&ev)) />
                </label>
                <label>"TLS server name (when the certificate does not carry the address's host)"
                    <input type="text" data-testid="sandbox-gateway-server-name" placeholder="openshell-gateway"
                        disabled=move || locked("gateway_server_name")
                        prop:value=move || server_name.get() on:input=move |ev| server_name.set(event_target_value(&ev)) />
                </label>
            </Show>
            {move || check().map(|c| view! {
                <p class=if c.ok { "ok" } else { "failed" } data-testid="sandbox-gateway-check">
                    <strong>{if c.ok { "Gateway: working. " } else { "Gateway: not working. " }}</strong>
                    {c.message}
                </p>
            })}
            <GatewayPreflightPanel on_ready=on_ready />
        </fieldset>
    }
}
