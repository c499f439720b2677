//! Admin Settings > Code sandbox: on/off, where sandboxes run, the machine's check,
//! network, limits and timers, and the egress proxy's latest decisions. Fields set by
//! the server's environment are shown locked. Turning the sandbox off, or moving it,
//! deletes every sandbox: the page asks first, saying how many.

use lens_types::{
    NetworkMode, SandboxBackend, SandboxField as F, SandboxNumber, SandboxSettingsView, UpdateSandboxSettingsRequest,
};
use leptos::prelude::*;

use crate::{
    api,
    pages::{egress_log::EgressLog, sandbox_check_list::CheckList, sandbox_place::SandboxPlace},
};

/// For a number whose 0 means "automatic": what that stands for on this machine.
fn automatic(v: &SandboxSettingsView, number: SandboxNumber) -> Option<String> {
    let stands_for = v.automatic(number)?;
    Some(match number {
        SandboxNumber::MaxRunning => format!("automatic ({stands_for} on this machine: four per CPU)"),
        SandboxNumber::MaxRunningPerPerson => {
            format!("automatic ({stands_for}: a quarter of the sandboxes at once, at least 1)")
        }
        _ => format!("automatic ({stands_for} MiB on this machine: three quarters of its memory)"),
    })
}

/// The sentence that asks before sandboxes are deleted; `None` when nothing is lost.
fn deletion_question(before: &SandboxSettingsView, req: &UpdateSandboxSettingsRequest) -> Option<String> {
    let count = before.sandbox_count;
    if !before.enabled || count == 0 {
        return None;
    }
    let moved = req.backend.is_some_and(|b| b != before.backend)
        || (before.backend == SandboxBackend::Gateway
            && (req.gateway_address.as_ref().is_some_and(|a| a.trim() != before.gateway_address)
                || req.gateway_cert_dir.as_ref().is_some_and(|d| d.trim() != before.gateway_cert_dir)));
    let what = if req.enabled == Some(false) {
        "Turning the sandbox off"
    } else if moved {
        "Moving the sandboxes"
    } else {
        return None;
    };
    let them = if count == 1 { "the 1 sandbox there is".to_string() } else { format!("all {count} sandboxes") };
    Some(format!("{what} deletes {them}, with the files in their workspaces. Go on?"))
}

/// Asks the person; `false` when they decline or the page cannot ask.
fn confirmed(question: &str) -> bool {
    web_sys::window().and_then(|w| w.confirm_with_message(question).ok()).unwrap_or(false)
}

fn lines(text: &str) -> Vec<String> {
    text.split(['\n', ',']).map(|l| l.trim().to_owned()).filter(|l| !l.is_empty()).collect()
}

#[component]
pub fn SandboxSection() -> impl IntoView {
    let view_sig = RwSignal::new(None::<SandboxSettingsView>);
    let enabled = RwSignal::new(false);
    let backend = RwSignal::new("local".to_string());
    let address = RwSignal::new(String::new());
    let cert_dir = RwSignal::new(String::new());
    let server_name = RwSignal::new(String::new());
    let network = RwSignal::new("off".to_string());
    let hosts = RwSignal::new(String::new());
    let trusted = RwSignal::new(String::new());
    let people_allow = RwSignal::new(false);
    let numbers: Vec<RwSignal<String>> = SandboxNumber::ALL.iter().map(|_| RwSignal::new(String::new())).collect();
    let status = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    let fill = {
        let numbers = numbers.clone();
        move |v: SandboxSettingsView| {
            enabled.set(v.enabled);
            backend.set(v.backend.as_str().to_owned());
            address.set(v.gateway_address.clone());
            cert_dir.set(v.gateway_cert_dir.clone());
            server_name.set(v.gateway_server_name.clone());
            network.set(v.network.as_str().to_owned());
            hosts.set(v.hosts.join("\n"));
            trusted.set(v.trusted_egress.join("\n"));
            people_allow.set(v.people_allow_hosts);
            for (number, signal) in SandboxNumber::ALL.into_iter().zip(&numbers) {
                signal.set(v.number(number).to_string());
            }
            view_sig.set(Some(v));
        }
    };
    {
        let fill = fill.clone();
        leptos::task::spawn_local(async move {
            match api::sandbox_settings().await {
                Ok(v) => fill(v),
                Err(e) => status.set(Some(e.message)),
            }
        });
    }
    let locked = move |name: &str| view_sig.with(|v| v.as_ref().is_some_and(|v| v.is_locked(name)));
    let save = {
        let (fill, numbers) = (fill.clone(), numbers.clone());
        move |ev: leptos::ev::SubmitEvent| {
            ev.prevent_default();
            let mut req = UpdateSandboxSettingsRequest::default();
            if !locked(F::Enabled.name()) {
                req.enabled = Some(enabled.get_untracked());
            }
            if !locked(F::Backend.name()) {
                req.backend = SandboxBackend::parse(&backend.get_untracked());
            }
            if req.backend == Some(SandboxBackend::Gateway) {
                for (field, signal, slot) in [
                    (F::GatewayAddress, address, &mut req.gateway_address),
                    (F::GatewayCertDir, cert_dir, &mut req.gateway_cert_dir),
                    (F::GatewayServerName, server_name, &mut req.gateway_server_name),
                ] {
                    if !locked(field.name()) {
                        *slot = Some(signal.get_untracked().trim().to_owned());
                    }
                }
            }
            if !locked(F::Network.name()) {
                req.network = NetworkMode::parse(&network.get_untracked());
            }
            if !locked(F::Hosts.name()) {
                req.hosts = Some(lines(&hosts.get_untracked()));
            }
            if !locked(F::TrustedEgress.name()) {
                req.trusted_egress = Some(lines(&trusted.get_untracked()));
            }
            if !locked(F::PeopleAllowHosts.name()) {
                req.people_allow_hosts = Some(people_allow.get_untracked());
            }
            for (number, signal) in SandboxNumber::ALL.into_iter().zip(&numbers) {
                let spec = number.spec();
                if locked(spec.name) {
                    continue;
                }
                match signal.get_untracked().trim().parse::<u64>() {
                    Ok(n) => req.set_number(number, n),
                    Err(_) => return status.set(Some(format!("{} must be a whole number.", spec.label))),
                }
            }
            if let Some(question) = view_sig.with_untracked(|v| v.as_ref().and_then(|v| deletion_question(v, &req)))
                && !confirmed(&question)
            {
                return status.set(Some("Nothing was changed.".into()));
            }
            let fill = fill.clone();
            busy.set(true);
            let checking = match (req.enabled, req.backend) {
                (Some(true), Some(SandboxBackend::Gateway)) => "Saving (checking the gateway)…",
                (Some(true), _) => "Saving (checking this machine)…",
                _ => "Saving…",
            };
            status.set(Some(checking.into()));
            leptos::task::spawn_local(async move {
                match api::update_sandbox_settings(&req).await {
                    Ok(v) => {
                        fill(v);
                        status.set(Some("Saved.".into()));
                    }
                    Err(e) => status.set(Some(e.message)),
                }
                busy.set(false);
            });
        }
    };
    let recheck = {
        let fill = fill.clone();
        move |_| {
            let fill = fill.clone();
            busy.set(true);
            leptos::task::spawn_local(async move {
                match api::check_sandbox().await {
                    Ok(v) => fill(v),
                    Err(e) => status.set(Some(e.message)),
                }
                busy.set(false);
            });
        }
    };
    let machine_check = Signal::derive(move || {
        view_sig.with(|v| v.as_ref().and_then(|v| v.check.clone()).map(|c| c.items).unwrap_or_default())
    });
    let on_ready = {
        let fill = fill.clone();
        Callback::new(move |v: SandboxSettingsView| fill(v))
    };
    let number_fields = SandboxNumber::ALL
        .into_iter()
        .zip(numbers)
        .map(|(number, signal)| {
            let spec = number.spec();
            let (field, label, unit) = (spec.name, spec.label, spec.unit);
            let id = format!("sandbox-{}", field.replace('_', "-"));
            // Where 0 is "automatic": a box that says what it stands for here, and the
            // number only when it is not.
            let auto = Signal::derive(move || spec.zero_is_automatic && signal.with(|s| s.trim() == "0"));
            let means = move || view_sig.with(|v| v.as_ref().and_then(|v| automatic(v, number))).unwrap_or_default();
            let toggle = move |ev: leptos::ev::Event| {
                let stands_for = view_sig.with_untracked(|v| v.as_ref().and_then(|v| v.automatic(number)).unwrap_or(0));
                signal.set(if event_target_checked(&ev) { "0".into() } else { stands_for.to_string() });
            };
            let auto_box = spec.zero_is_automatic.then(|| {
                view! {
                    <label class="check">
                        <input type="checkbox" data-testid=format!("{id}-auto") disabled=move || locked(field)
                            prop:checked=auto on:change=toggle />
                        {means}
                    </label>
                }
            });
            view! {
                <div class="number-field">
                    <label for=id.clone()>{label}</label>
                    <div class="number-row">
                        {auto_box}
                        // Disabled while automatic: a hidden field is no obstacle to Save.
                        <span class="number-row" hidden=auto>
                            <input type="number" min="0" inputmode="numeric" data-testid=id.clone() id=id
                                disabled=move || locked(field) || auto.get()
                                prop:value=move || signal.get() on:input=move |ev| signal.set(event_target_value(&ev)) />
                            <span class="muted">{unit}</span>
                        </span>
                    </div>
                </div>
            }
        })
        .collect_view();
    view! {
        <section class="card" aria-labelledby="sandbox-h">
            <h2 id="sandbox-h">"Code sandbox"</h2>
            <CheckList title="This machine" items=machine_check testid="sandbox-check" />
            <button type="button" data-testid="sandbox-recheck" on:click=recheck disabled=move || busy.get()>
                "Check again"
            </button>
            <form class="form" on:submit=save data-testid="sandbox-form">
                <label class="check">
                    <input type="checkbox" data-testid="sandbox-enabled" disabled=move || locked(F::Enabled.name())
                        prop:checked=move || enabled.get() on:change=move |ev| enabled.set(event_target_checked(&ev)) />
                    "Run code in a sandbox (run_python, run_bash, sandbox_files)"
                </label>
                <SandboxPlace view_sig=view_sig backend=backend gateway=[address, cert_dir, server_name]
                    on_ready=on_ready />
                <label>"Network"
                    <select data-testid="sandbox-network" disabled=move || locked(F::Network.name())
                        prop:value=move || network.get() on:change=move |ev| network.set(event_target_value(&ev))>
                        <option value="off">"Off: loopback only"</option>
                        <option value="registries">"Package registries only"</option>
                        <option value="hosts">"Registries and the hosts below"</option>
                    </select>
                </label>
                <p class="muted" data-testid="sandbox-registries">
                    "Registries found: "
                    {move || view_sig.with(|v| v.as_ref().map(|v| if v.registries.is_empty() { "none".to_string() } else { v.registries.join(", ") }).unwrap_or_default())}
                </p>
                <label>"Allowed hosts (one per line)"
                    <textarea rows="3" data-testid="sandbox-hosts" disabled=move || locked(F::Hosts.name())
                        prop:value=move || hosts.get() on:input=move |ev| hosts.set(event_target_value(&ev))></textarea>
                </label>
                <label>"Trusted egress ranges (CIDR, one per line; empty: public addresses only)"
                    <textarea rows="2" data-testid="sandbox-trusted" disabled=move || locked(F::TrustedEgress.name())
                        prop:value=move || trusted.get() on:input=move |ev| trusted.set(event_target_value(&ev))></textarea>
                </label>
                <label class="check">
                    <input type="checkbox" data-testid="sandbox-people-allow" disabled=move || locked(F::PeopleAllowHosts.name())
                        prop:checked=move || people_allow.get() on:change=move |ev| people_allow.set(event_target_checked(&ev)) />
                    "People may allow a host a run was refused, for their own conversation only"
                </label>
                <div class="number-fields">{number_fields}</div>
                <Show when=move || view_sig.with(|v| v.as_ref().is_some_and(|v| !v.locked.is_empty()))>
                    <p class="muted" data-testid="sandbox-locked">"Greyed fields are set by the server's --sandbox options or LENS_SANDBOX_* environment."</p>
                </Show>
                <button type="submit" class="primary" data-testid="save-sandbox" disabled=move || busy.get()>"Save"</button>
                <p role="status" data-testid="sandbox-status">{move || status.get().unwrap_or_default()}</p>
            </form>
            <EgressLog view_sig=view_sig />
        </section>
    }
}
