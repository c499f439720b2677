//! Settings > Code sandbox > where sandboxes run: this machine, or an OpenShell gateway
//! with its address, certificate folder and TLS server name, and its last check.

use lens_types::{SandboxField, SandboxSettingsView};
use leptos::prelude::*;

use crate::pages::gateway_preflight::GatewayPreflightPanel;

/// The choices: (value, label).
const PLACES: [(&str, &str); 2] = [("local", "This machine (bubblewrap)"), ("gateway", "An OpenShell gateway")];

/// The gateway's fields: (setting, label, placeholder).
const GATEWAY_FIELDS: [(SandboxField, &str, &str); 3] = [
    (SandboxField::GatewayAddress, "Gateway address (host:port)", "openshell-gateway:17670"),
    (
        SandboxField::GatewayCertDir,
        "Certificate folder on the server (ca.crt, client/tls.crt, client/tls.key)",
        "/var/lib/lens/openshell",
    ),
    (
        SandboxField::GatewayServerName,
        "TLS server name (when the certificate does not carry the address's host)",
        "openshell-gateway",
    ),
];

/// The place's fields; the form around them saves them with the rest.
#[component]
pub fn SandboxPlace(
    view_sig: RwSignal<Option<SandboxSettingsView>>,
    backend: RwSignal<String>,
    /// The gateway's address, certificate folder and server name, in [`GATEWAY_FIELDS`]' order.
    gateway: [RwSignal<String>; 3],
    /// Called with the settings once the gateway started here answers.
    on_ready: Callback<SandboxSettingsView>,
) -> impl IntoView {
    let locked = move |name: &str| view_sig.with(|v| v.as_ref().is_some_and(|v| v.is_locked(name)));
    let check = move || view_sig.with(|v| v.as_ref().and_then(|v| v.gateway_check.clone()));
    let radios = PLACES
        .iter()
        .map(|&(value, label)| {
            view! {
                <label class="check">
                    <input type="radio" name="sandbox-backend" value=value data-testid=format!("sandbox-backend-{value}")
                        disabled=move || locked(SandboxField::Backend.name())
                        prop:checked=move || backend.get() == value on:change=move |_| backend.set(value.into()) />
                    {label}
                </label>
            }
        })
        .collect_view();
    let fields = GATEWAY_FIELDS
        .iter()
        .zip(gateway)
        .map(|(&(field, label, placeholder), signal)| {
            let field = field.name();
            view! {
                <label>{label}
                    <input type="text" data-testid=format!("sandbox-{}", field.replace('_', "-").replace("cert-dir", "certs"))
                        placeholder=placeholder disabled=move || locked(field)
                        prop:value=move || signal.get() on:input=move |ev| signal.set(event_target_value(&ev)) />
                </label>
            }
        })
        .collect_view();
    view! {
        <fieldset class="place" data-testid="sandbox-place">
            <legend>"Where sandboxes run"</legend>
            {radios}
            <div hidden=move || backend.get() != "gateway">{fields}</div>
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
