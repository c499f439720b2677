//! Settings: one route per section (`/settings/<section>`) with a side list of the
//! sections; a person sees Account and API tokens, an admin also the model, the code
//! sandbox, storage, sign-in, groups, usage, the audit trail and accounts.

use leptos::prelude::*;
use leptos_router::{components::A, hooks::use_params_map};

use crate::{
    context::Session,
    pages::{
        account_settings::AccountSection, accounts_settings::AccountsSection, audit_settings::AuditSection,
        groups_settings::GroupsSection, model_settings::ModelSection, sandbox_settings::SandboxSection,
        sign_in_settings::SignInSection, storage_settings::StorageSection, tokens_settings::TokensSection,
        usage_settings::UsageSection,
    },
};

/// The sections: (address segment, name, for admins only), in the side list's order.
const SECTIONS: [(&str, &str, bool); 10] = [
    ("account", "Account", false),
    ("tokens", "API tokens", false),
    ("model", "Model", true),
    ("sandbox", "Code sandbox", true),
    ("storage", "Storage", true),
    ("sign-in", "Sign-in", true),
    ("groups", "Groups", true),
    ("usage", "Usage", true),
    ("audit", "Audit", true),
    ("accounts", "Accounts", true),
];

/// The section an address names (`/settings` alone is the first).
fn section_of(segment: Option<&str>) -> Option<(&'static str, &'static str, bool)> {
    let wanted = segment.filter(|s| !s.is_empty()).unwrap_or(SECTIONS[0].0);
    SECTIONS.iter().copied().find(|(slug, ..)| *slug == wanted)
}

#[component]
pub fn SettingsPage() -> impl IntoView {
    let session = expect_context::<Session>();
    let is_admin = Signal::derive(move || session.0.with(|s| s.as_ref().is_some_and(|s| s.user.is_admin)));
    let params = use_params_map();
    let section = Memo::new(move |_| params.with(|p| section_of(p.get("section").as_deref())));
    let links = move || {
        SECTIONS
            .iter()
            .filter(|(.., admin_only)| !admin_only || is_admin.get())
            .map(|&(slug, name, _)| {
                view! {
                    <li><A href=format!("/settings/{slug}") attr:data-testid=format!("settings-nav-{slug}")>{name}</A></li>
                }
            })
            .collect_view()
    };
    let shown = move || {
        match section.get() {
        None => view! {
            <p class="page-message" role="alert" data-testid="settings-unknown">"There is no such section of the settings."</p>
        }
        .into_any(),
        Some((.., true)) if !is_admin.get() => view! {
            <p class="page-message" role="alert" data-testid="settings-admins-only">"This section is for admins."</p>
        }
        .into_any(),
        Some((slug, ..)) => match slug {
            "tokens" => view! { <TokensSection /> }.into_any(),
            "model" => view! { <ModelSection /> }.into_any(),
            "sandbox" => view! { <SandboxSection /> }.into_any(),
            "storage" => view! { <StorageSection /> }.into_any(),
            "sign-in" => view! { <SignInSection /> }.into_any(),
            "groups" => view! { <GroupsSection /> }.into_any(),
            "usage" => view! { <UsageSection /> }.into_any(),
            "audit" => view! { <AuditSection /> }.into_any(),
            "accounts" => view! { <AccountsSection /> }.into_any(),
            _ => view! { <AccountSection /> }.into_any(),
        },
    }
    };
    view! {
        <div class="settings-page">
            <nav class="crumbs"><A href="/chat" attr:data-testid="back-to-chat">"← Back to chat"</A></nav>
            <h1>"Settings"</h1>
            <div class="settings-layout">
                <nav class="settings-nav" aria-label="Settings sections" data-testid="settings-nav">
                    <ul>{links}</ul>
                </nav>
                <div class="settings-section">{shown}</div>
            </div>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_names_one_section_and_the_bare_one_is_the_account() {
        assert_eq!(section_of(None).map(|s| s.0), Some("account"));
        assert_eq!(section_of(Some("")).map(|s| s.0), Some("account"));
        assert_eq!(section_of(Some("sandbox")), Some(("sandbox", "Code sandbox", true)));
        assert_eq!(section_of(Some("nope")), None);
    }
}
