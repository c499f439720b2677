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
    let max_output = RwSignal::new(String::new());
    let status = RwSignal::new(None::<String>);
    let testing = RwSignal::new(false);
    let tested = RwSignal::new(None::<(bool, String)>);
    let offered = RwSignal::new(Vec::<String>::new());
    let listed = RwSignal::new(None::<String>);
    let test = move |_| {
        testing.set(true);
        tested.set(None);
        leptos::task::spawn_local(async move {
            tested.set(Some(match api::test_model().await {
                Ok(r) if r.ok => (
                    true,
                    format!(
                        "It answered{}: “{}”",
                        r.first_token_ms.map(|ms| format!(", first word after {ms} ms")).unwrap_or_default(),
                        r.reply.unwrap_or_default().trim()
                    ),
                ),
                Ok(r) => (false, format!("The test failed: {}", r.error.unwrap_or_default())),
                Err(e) => (false, format!("The test failed: {}", e.message)),
            }));
            testing.set(false);
        });
    };
    let list = move |_| {
        leptos::task::spawn_local(async move {
            match api::model_list().await {
                Ok(l) => {
                    listed.set(Some(match l.models.len() {
                        0 => "The endpoint offers no models.".to_owned(),
                        1 => "The endpoint offers 1 model: pick it in Model name.".to_owned(),
                        n => format!("The endpoint offers {n} models: pick one in Model name."),
                    }));
                    offered.set(l.models);
                }
                Err(e) => listed.set(Some(e.message)),
            }
        });
    };
    let fill = move |v: ModelSettingsView| {
        provider.set(v.provider.as_str().to_owned());
        base_url.set(v.base_url.clone());
        model.set(v.model.clone());
        api_key.set(String::new());
        context.set(v.context_tokens.to_string());
        max_output.set(v.max_output_tokens.to_string());
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
        let Ok(max_output_tokens) = max_output.get_untracked().trim().parse::<u32>() else {
            status.set(Some("The longest answer is a whole number of tokens.".into()));
            return;
        };
        let req = UpdateModelSettingsRequest {
            provider: unlocked("provider").then(|| ModelProvider::parse(&provider.get_untracked())).flatten(),
            base_url: unlocked("base_url").then(|| base_url.get_untracked()),
            model: unlocked("model").then(|| model.get_untracked()),
            api_key: (unlocked("api_key") && !api_key.get_untracked().is_empty()).then(|| api_key.get_untracked()),
            context_tokens: Some(context_tokens),
            max_output_tokens: Some(max_output_tokens),
        };
        let had_key = view_sig.with_untracked(|v| v.as_ref().is_some_and(|v| v.api_key_set));
        leptos::task::spawn_local(async move {
            match api::update_model_settings(&req).await {
                Ok(v) => {
                    // The server drops a stored key when the address moves to another host.
                    let dropped = had_key && !v.api_key_set;
                    fill(v);
                    status.set(Some(if dropped {
                        "Saved. The API key was cleared: the address now points at another host, and a key is \
                         sent only where it was given. Enter the key for the new address."
                            .into()
                    } else {
                        "Saved.".into()
                    }));
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
                    <input type="text" data-testid="model-name" disabled=move || locked("model") list="model-names"
                        prop:value=move || model.get() on:input=move |ev| model.set(event_target_value(&ev)) />
                </label>
                <datalist id="model-names">
                    {move || offered.get().into_iter().map(|m| view! { <option value=m.clone()></option> }).collect_view()}
                </datalist>
                <button type="button" data-testid="list-models" on:click=list>"List the endpoint's models"</button>
                <p role="status" data-testid="model-list-status">{move || listed.get().unwrap_or_default()}</p>
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
                <Show when=move || provider.get() == "anthropic">
                    <label>"Longest answer"
                        <input type="number" min="256" max="128000" inputmode="numeric" data-testid="model-max-output-tokens"
                            prop:value=move || max_output.get() on:input=move |ev| max_output.set(event_target_value(&ev)) />
                        <span class="muted">"tokens per turn (Anthropic requires a limit)"</span>
                    </label>
                </Show>
                <Show when=move || view_sig.with(|v| v.as_ref().is_some_and(|v| !v.locked.is_empty()))>
                    <p class="muted" data-testid="model-locked">"Greyed fields are set by the server's LENS_MODEL_* environment."</p>
                </Show>
                <button type="submit" class="primary" data-testid="save-model">"Save"</button>
                <p role="status" data-testid="model-status">{move || status.get().unwrap_or_default()}</p>
                <button type="button" data-testid="test-model" on:click=test disabled=move || testing.get()>
                    {move || if testing.get() { "Testing…" } else { "Test the saved model" }}
                </button>
                <p role="status" data-testid="model-test-result" class:error=move || tested.with(|t| t.as_ref().is_some_and(|t| !t.0))>
                    {move || tested.get().map(|t| t.1).unwrap_or_default()}
                </p>
            </form>
        </section>
    }
}
