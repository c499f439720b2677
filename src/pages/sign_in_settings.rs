//! Admin Settings > Sign-in: the organisation's OpenID Connect provider, who may sign in
//! through it, who it makes admins, and whether local passwords stay on beside it.

use lens_types::{LocalPasswords, SignInSettingsView, UpdateSignInSettingsRequest};
use leptos::prelude::*;

use crate::{api, components::copy_button::CopyButton};

/// A list as typed in one box: comma-separated, each entry trimmed, empty ones dropped.
pub(crate) fn split_list(text: &str) -> Vec<String> {
    text.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect()
}

/// Admin: single sign-on's provider and client, its groups, and local passwords. Fields
/// set by the environment are shown locked.
#[component]
pub fn SignInSection() -> impl IntoView {
    let view_sig = RwSignal::new(None::<SignInSettingsView>);
    let issuer = RwSignal::new(String::new());
    let client_id = RwSignal::new(String::new());
    let client_secret = RwSignal::new(String::new());
    let scopes = RwSignal::new(String::new());
    let groups_claim = RwSignal::new(String::new());
    let allowed = RwSignal::new(String::new());
    let admins = RwSignal::new(String::new());
    let name = RwSignal::new(String::new());
    let local = RwSignal::new("on".to_string());
    let status = RwSignal::new(None::<String>);
    let fill = move |v: SignInSettingsView| {
        issuer.set(v.issuer.clone());
        client_id.set(v.client_id.clone());
        client_secret.set(String::new());
        scopes.set(v.scopes.join(", "));
        groups_claim.set(v.groups_claim.clone());
        allowed.set(v.allowed_groups.join(", "));
        admins.set(v.admin_groups.join(", "));
        name.set(v.name.clone());
        local.set(v.local_passwords.as_str().to_owned());
        view_sig.set(Some(v));
    };
    leptos::task::spawn_local(async move {
        match api::sign_in_settings().await {
            Ok(v) => fill(v),
            Err(e) => status.set(Some(e.message)),
        }
    });
    let locked =
        move |field: &'static str| view_sig.with(|v| v.as_ref().is_some_and(|v| v.locked.iter().any(|l| l == field)));
    let locked_signal = move |field: &'static str| Signal::derive(move || locked(field));
    let callback =
        Signal::derive(move || view_sig.with(|v| v.as_ref().map(|v| v.callback_url.clone())).unwrap_or_default());
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let unlocked = |field: &'static str| !locked(field);
        let secret = client_secret.get_untracked();
        let req = UpdateSignInSettingsRequest {
            issuer: unlocked("issuer").then(|| issuer.get_untracked()),
            client_id: unlocked("client_id").then(|| client_id.get_untracked()),
            client_secret: (unlocked("client_secret") && !secret.is_empty()).then_some(secret),
            scopes: unlocked("scopes").then(|| split_list(&scopes.get_untracked())),
            groups_claim: unlocked("groups_claim").then(|| groups_claim.get_untracked()),
            allowed_groups: unlocked("allowed_groups").then(|| split_list(&allowed.get_untracked())),
            admin_groups: unlocked("admin_groups").then(|| split_list(&admins.get_untracked())),
            name: unlocked("name").then(|| name.get_untracked()),
            local_passwords: unlocked("local_passwords")
                .then(|| LocalPasswords::parse(&local.get_untracked()))
                .flatten(),
        };
        let had_secret = view_sig.with_untracked(|v| v.as_ref().is_some_and(|v| v.client_secret_set));
        status.set(None);
        leptos::task::spawn_local(async move {
            match api::update_sign_in_settings(&req).await {
                Ok(v) => {
                    // The server forgets a stored secret when the issuer moves to another host.
                    let dropped = had_secret && !v.client_secret_set;
                    let on = v.single_sign_on;
                    fill(v);
                    status.set(Some(match (dropped, on) {
                        (true, _) => "Saved. The client secret was cleared: the issuer is on another host now, and a \
                                      secret is sent only where it was given. Enter the new provider's secret."
                            .into(),
                        (false, true) => "Saved. The next sign-in uses these settings.".into(),
                        (false, false) => "Saved. Single sign-on is off: everyone signs in with a password.".into(),
                    }));
                }
                Err(e) => status.set(Some(e.message)),
            }
        });
    };
    view! {
        <section class="card" aria-labelledby="sign-in-h">
            <h2 id="sign-in-h">"Sign-in"</h2>
            <p class="muted">"Single sign-on through your organisation's OpenID Connect provider. Register Lens there as a client with this redirect address:"</p>
            <pre><code data-testid="sign-in-callback">{callback}</code></pre>
            <CopyButton text=callback what="the redirect address" testid="copy-sign-in-callback" />
            <form class="form" on:submit=save data-testid="sign-in-form">
                <label>"Issuer"
                    <input type="url" data-testid="sign-in-issuer" disabled=move || locked("issuer") aria-describedby="sign-in-issuer-help"
                        placeholder="https://id.example.org/realms/staff"
                        prop:value=move || issuer.get() on:input=move |ev| issuer.set(event_target_value(&ev)) />
                    <span id="sign-in-issuer-help" class="muted">"empty: no single sign-on"</span>
                </label>
                <TextField label="Client id" testid="sign-in-client-id" value=client_id locked=locked_signal("client_id") />
                <label>"Client secret"
                    <input type="password" autocomplete="off" data-testid="sign-in-client-secret" disabled=move || locked("client_secret")
                        placeholder=move || if view_sig.with(|v| v.as_ref().is_some_and(|v| v.client_secret_set)) { "(set; type to replace)" } else { "(none: a public client)" }
                        prop:value=move || client_secret.get() on:input=move |ev| client_secret.set(event_target_value(&ev)) />
                </label>
                <TextField label="Scopes" testid="sign-in-scopes" value=scopes locked=locked_signal("scopes")
                    help="besides openid, comma-separated" />
                <TextField label="Groups claim" testid="sign-in-groups-claim" value=groups_claim locked=locked_signal("groups_claim")
                    help="the claim that lists a person's groups; a dotted path reaches inside (realm_access.roles)" />
                <TextField label="Groups that may sign in" testid="sign-in-allowed-groups" value=allowed
                    locked=locked_signal("allowed_groups") help="comma-separated; empty: anyone the provider signs in" />
                <TextField label="Admin groups" testid="sign-in-admin-groups" value=admins locked=locked_signal("admin_groups")
                    help="their people are Lens's admins, decided at each sign-in" />
                <TextField label="Button's name" testid="sign-in-name" value=name locked=locked_signal("name")
                    help="the login page shows “Sign in with …”" />
                <label>"Local passwords"
                    <select data-testid="sign-in-local-passwords" disabled=move || locked("local_passwords")
                        prop:value=move || local.get() on:change=move |ev| local.set(event_target_value(&ev))>
                        <option value="on">"On for everyone"</option>
                        <option value="admins">"Admins only (the way in when the provider is down)"</option>
                        <option value="off">"Off: everyone signs in through the provider"</option>
                    </select>
                    <span class="muted">"while single sign-on is off, everyone signs in with a password"</span>
                </label>
                <Show when=move || view_sig.with(|v| v.as_ref().is_some_and(|v| !v.locked.is_empty()))>
                    <p class="muted" data-testid="sign-in-locked">"Greyed fields are set by the server's LENS_OIDC_* or LENS_LOCAL_PASSWORDS environment."</p>
                </Show>
                <button type="submit" class="primary" data-testid="save-sign-in">"Save"</button>
                <p role="status" data-testid="sign-in-status">{move || status.get().unwrap_or_default()}</p>
            </form>
        </section>
    }
}

/// One line of text in the form, greyed when the environment sets it, with its help below.
#[component]
fn TextField(
    label: &'static str,
    testid: &'static str,
    value: RwSignal<String>,
    locked: Signal<bool>,
    #[prop(optional)] help: Option<&'static str>,
) -> impl IntoView {
    view! {
        <label>{label}
            <input type="text" autocomplete="off" data-testid=testid disabled=move || locked.get()
                prop:value=move || value.get() on:input=move |ev| value.set(event_target_value(&ev)) />
            {help.map(|h| view! { <span class="muted">{h}</span> })}
        </label>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typed_list_is_split_on_commas_and_trimmed() {
        assert_eq!(split_list(" staff, lens admins ,,"), vec!["staff", "lens admins"]);
        assert!(split_list("  ").is_empty());
    }
}
