//! Admin Settings > Model: the provider, its address, model name and key.

use lens_types::{ModelProvider, ModelSettingsView, UpdateModelSettingsRequest};
use leptos::prelude::*;

use crate::api;

/// Admin: the model provider, endpoint, name and key. Fields set by the environment
/// are shown locked.
#[component]
pub fn ModelSection() -> impl IntoView {
    let view_sig = RwSignal::new(None::<ModelSettingsView>);
    let provider = RwSignal::new("direct".to_string());
    let base_url = RwSignal::new(String::new());
    let model = RwSignal::new(String::new());
    let api_key = RwSignal::new(String::new());
    let context = RwSignal::new(String::new());
    let status = RwSignal::new(None::<String>);
    let fill = move |v: ModelSettingsView| {
        provider.set(v.provider.as_str().to_owned());
        base_url.set(v.base_url.clone());
        model.set(v.model.clone());
        api_key.set(String::new());
        context.set(v.context_tokens.to_string());
        view_sig.set(Some(v));
    };
    leptos::task::spawn_local(async move {
        match api::model_settings().await {
            Ok(v) => fill(v),
            Err(e) => status.set(Some(e.message)),
        }
    });
    let locked =
        move |field: &'static str| view_sig.with(|v| v.as_ref().is_some_and(|v| v.locked.iter().any(|l| l == field)));
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let unlocked = |field: &'static str| !locked(field);
        let Ok(context_tokens) = context.get_untracked().trim().parse::<u32>() else {
            status.set(Some("The context window is a whole number of tokens.".into()));
            return;
        };
        let req = UpdateModelSettingsRequest {
            provider: unlocked("provider").then(|| ModelProvider::parse(&provider.get_untracked())).flatten(),
            base_url: unlocked("base_url").then(|| base_url.get_untracked()),
            model: unlocked("model").then(|| model.get_untracked()),
            api_key: (unlocked("api_key") && !api_key.get_untracked().is_empty()).then(|| api_key.get_untracked()),
            context_tokens: Some(context_tokens),
        };
        leptos::task::spawn_local(async move {
            match api::update_model_settings(&req).await {
                Ok(v) => {
                    fill(v);
                    status.set(Some("Saved.".into()));
                }
                Err(e) => status.set(Some(e.message)),
            }
        });
    };
    view! {
        <section class="card" aria-labelledby="model-h">
            <h2 id="model-h">"Model"</h2>
            <form class="form" on:submit=save data-testid="model-form">
                <label>"Provider"
                    <select data-testid="model-provider" disabled=move || locked("provider")
                        prop:value=move || provider.get() on:change=move |ev| provider.set(event_target_value(&ev))>
                        <option value="direct">"Direct (no model: runs fenced code)"</option>
                        <option value="openai_compatible">"OpenAI-compatible (OpenAI, Ollama, vLLM, llama.cpp)"</option>
                        <option value="anthropic">"Anthropic"</option>
                    </select>
                </label>
                <label>"Base URL"
                    <input type="url" data-testid="model-base-url" disabled=move || locked("base_url")
                        prop:value=move || base_url.get() on:input=move |ev| base_url.set(event_target_value(&ev)) />
                </label>
                <label>"Model name"
                    <input type="text" data-testid="model-name" disabled=move || locked("model")
                        prop:value=move || model.get() on:input=move |ev| model.set(event_target_value(&ev)) />
                </label>
                <label>"API key"
                    <input type="password" autocomplete="off" data-testid="model-api-key" disabled=move || locked("api_key")
                        placeholder=move || if view_sig.with(|v| v.as_ref().is_some_and(|v| v.api_key_set)) { "(set; type to replace)" } else { "(none)" }
                        prop:value=move || api_key.get() on:input=move |ev| api_key.set(event_target_value(&ev)) />
                </label>
                <label>"Context window"
                    <input type="number" min="1024" step="1024" inputmode="numeric" data-testid="model-context-tokens"
                        aria-describedby="model-context-help"
                        prop:value=move || context.get() on:input=move |ev| context.set(event_target_value(&ev)) />
                    <span id="model-context-help" class="muted">"tokens; earlier messages are fitted into three quarters of it"</span>
                </label>
                <Show when=move || view_sig.with(|v| v.as_ref().is_some_and(|v| !v.locked.is_empty()))>
                    <p class="muted" data-testid="model-locked">"Greyed fields are set by the server's LENS_MODEL_* environment."</p>
                </Show>
                <button type="submit" class="primary" data-testid="save-model">"Save"</button>
                <p role="status" data-testid="model-status">{move || status.get().unwrap_or_default()}</p>
            </form>
        </section>
    }
}
