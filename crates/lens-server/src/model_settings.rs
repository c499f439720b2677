//! The model settings: stored in the database (the key sealed with the server secret),
//! overridden field by field by `LENS_MODEL_*`, and turned into a `ChatModel`.

use std::sync::Arc;

use lens_llm::{Anthropic, ChatModel, Direct, OpenAiCompatible};
use lens_types::{ModelProvider, ModelSettingsView, UpdateModelSettingsRequest};

use crate::{
    AppError, Config,
    secret::ServerSecret,
    store::{AuditNote, Store},
};

const PROVIDER: &str = "model.provider";
const BASE_URL: &str = "model.base_url";
const NAME: &str = "model.name";
const API_KEY: &str = "model.api_key";
const CONTEXT_TOKENS: &str = "model.context_tokens";
const MAX_OUTPUT: &str = "model.max_output_tokens";
/// Anthropic's answer length when none is set, and what may be set.
const DEFAULT_MAX_OUTPUT: u32 = 4096;
const MAX_OUTPUT_RANGE: std::ops::RangeInclusive<u32> = 256..=128_000;
/// The context windows an admin may set, in tokens.
const CONTEXT_RANGE: std::ops::RangeInclusive<u32> = 1_024..=4_000_000;

/// The settings in force, with the key in clear (never shown to anyone).
#[derive(Clone)]
pub struct ModelSettings {
    pub provider: ModelProvider,
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    /// The model's context window in tokens: earlier messages are fitted into it.
    pub context_tokens: u32,
    /// The longest turn an Anthropic model may write, in tokens (its API requires one).
    pub max_output_tokens: u32,
    pub locked: Vec<String>,
}

/// Where the answers' model comes from.
#[derive(Clone)]
pub enum ModelSource {
    /// From the settings, read again for every answer.
    Settings,
    /// One fixed model (tests and benchmarks).
    Fixed(Arc<dyn ChatModel>),
}

/// The answers' model: where it comes from, and what reading and changing its settings
/// needs. Built once at start; cheap to clone.
#[derive(Clone)]
pub struct Models {
    pub source: ModelSource,
    config: Arc<Config>,
    store: Store,
    secret: Arc<ServerSecret>,
    /// The HTTP client the model providers share.
    pub http: reqwest::Client,
}

impl Models {
    pub fn new(source: ModelSource, config: Arc<Config>, store: Store, secret: Arc<ServerSecret>) -> Self {
        Self { source, config, store, secret, http: lens_llm::http_client() }
    }

    /// The settings in force.
    pub async fn settings(&self) -> Result<ModelSettings, AppError> {
        ModelSettings::load(self).await
    }

    /// Changes the settings, recorded with `audit` (the fields that changed are added to
    /// it, the key as hidden), and returns those then in force.
    pub async fn update(
        &self,
        req: UpdateModelSettingsRequest,
        audit: Option<AuditNote>,
    ) -> Result<ModelSettings, AppError> {
        ModelSettings::update(self, req, audit).await
    }

    /// The model for a new answer, and its context window in tokens (from the settings,
    /// for a fixed model too).
    pub async fn current(&self) -> Result<(Arc<dyn ChatModel>, u32), AppError> {
        let settings = self.settings().await?;
        let model = match &self.source {
            ModelSource::Fixed(m) => m.clone(),
            ModelSource::Settings => settings.model(&self.http),
        };
        Ok((model, settings.context_tokens))
    }
}

fn default_base_url(p: ModelProvider) -> &'static str {
    match p {
        ModelProvider::Direct => "",
        ModelProvider::OpenaiCompatible => "http://127.0.0.1:11434/v1",
        ModelProvider::Anthropic => "https://api.anthropic.com",
    }
}

impl ModelSettings {
    async fn load(state: &Models) -> Result<Self, AppError> {
        let c = &state.config;
        let store = &state.store;
        let mut locked = Vec::new();
        let mut pick = |field: &str, env: &Option<String>, stored: Option<String>| match env {
            Some(v) => {
                locked.push(field.to_owned());
                Some(v.clone())
            }
            None => stored,
        };
        let provider = pick("provider", &c.model_provider, store.setting(PROVIDER).await?);
        let base_url = pick("base_url", &c.model_base_url, store.setting(BASE_URL).await?);
        let model = pick("model", &c.model_name, store.setting(NAME).await?);
        let sealed = store.setting(API_KEY).await?;
        let stored_key = match sealed {
            Some(s) => Some(String::from_utf8(state.secret.open(API_KEY, &s)?).map_err(AppError::internal)?),
            None => None,
        };
        let api_key = pick("api_key", &c.model_api_key.as_ref().map(|k| k.expose().to_owned()), stored_key);
        let provider = provider.as_deref().and_then(ModelProvider::parse).unwrap_or(ModelProvider::Direct);
        let context_tokens = store
            .setting(CONTEXT_TOKENS)
            .await?
            .and_then(|t| t.parse().ok())
            .filter(|t| CONTEXT_RANGE.contains(t))
            .unwrap_or(crate::chat::history::DEFAULT_CONTEXT_TOKENS);
        let max_output_tokens = store
            .setting(MAX_OUTPUT)
            .await?
            .and_then(|t| t.parse().ok())
            .filter(|t| MAX_OUTPUT_RANGE.contains(t))
            .unwrap_or(DEFAULT_MAX_OUTPUT);
        Ok(Self {
            provider,
            base_url: base_url.filter(|u| !u.is_empty()).unwrap_or_else(|| default_base_url(provider).to_owned()),
            model: model.unwrap_or_default(),
            api_key,
            context_tokens,
            max_output_tokens,
            locked,
        })
    }

    pub fn view(&self) -> ModelSettingsView {
        ModelSettingsView {
            provider: self.provider,
            base_url: self.base_url.clone(),
            model: self.model.clone(),
            api_key_set: self.api_key.as_deref().is_some_and(|k| !k.is_empty()),
            context_tokens: self.context_tokens,
            max_output_tokens: self.max_output_tokens,
            locked: self.locked.clone(),
        }
    }

    /// The model these settings name.
    pub fn model(&self, client: &reqwest::Client) -> Arc<dyn ChatModel> {
        match self.provider {
            ModelProvider::Direct => Arc::new(Direct),
            ModelProvider::OpenaiCompatible => {
                Arc::new(OpenAiCompatible::new(client.clone(), &self.base_url, &self.model, self.api_key.clone()))
            }
            ModelProvider::Anthropic => {
                let model = Anthropic::new(client.clone(), &self.base_url, &self.model, self.api_key.clone());
                Arc::new(model.with_max_tokens(self.max_output_tokens))
            }
        }
    }

    /// Applies an admin's change. Locked fields may not change; the whole change is
    /// checked before anything is written.
    async fn update(
        state: &Models,
        req: UpdateModelSettingsRequest,
        audit: Option<AuditNote>,
    ) -> Result<Self, AppError> {
        let current = Self::load(state).await?;
        let touched = [
            ("provider", req.provider.is_some()),
            ("base_url", req.base_url.is_some()),
            ("model", req.model.is_some()),
            ("api_key", req.api_key.is_some()),
        ];
        if let Some((field, _)) = touched.iter().find(|(f, t)| *t && current.locked.iter().any(|l| l == f)) {
            return Err(AppError::Conflict(format!(
                "`{field}` is set by the server's environment and cannot be changed here"
            )));
        }
        if let Some(url) = &req.base_url {
            let ok = url.is_empty() || url.starts_with("http://") || url.starts_with("https://");
            if !ok || url.len() > 2048 {
                return Err(AppError::BadRequest("the base URL must start with http:// or https://".into()));
            }
        }
        if req.model.as_ref().is_some_and(|m| m.len() > 200) {
            return Err(AppError::BadRequest("the model name is too long".into()));
        }
        if req.context_tokens.is_some_and(|t| !CONTEXT_RANGE.contains(&t)) {
            return Err(AppError::BadRequest(format!(
                "the context window must be between {} and {} tokens",
                CONTEXT_RANGE.start(),
                CONTEXT_RANGE.end()
            )));
        }
        if req.max_output_tokens.is_some_and(|t| !MAX_OUTPUT_RANGE.contains(&t)) {
            return Err(AppError::BadRequest(format!(
                "the longest answer must be between {} and {} tokens",
                MAX_OUTPUT_RANGE.start(),
                MAX_OUTPUT_RANGE.end()
            )));
        }
        let mut pairs: Vec<(&str, Option<String>)> = Vec::new();
        // A key goes with the host it was given for: an address on another host, without a
        // key in the same change, forgets the stored one (a key from the environment
        // cannot follow at all).
        if req.api_key.is_none() && moves_host(&current, &req) {
            if current.locked.iter().any(|l| l == "api_key") {
                return Err(AppError::Conflict(
                    "the API key is set by the server's environment (LENS_MODEL_API_KEY), so the model's address \
                     cannot move to another host here"
                        .into(),
                ));
            }
            pairs.push((API_KEY, None));
        }
        if let Some(p) = req.provider {
            pairs.push((PROVIDER, Some(p.as_str().to_owned())));
        }
        if let Some(u) = req.base_url {
            pairs.push((BASE_URL, Some(u.trim().to_owned()).filter(|u| !u.is_empty())));
        }
        if let Some(m) = req.model {
            pairs.push((NAME, Some(m.trim().to_owned())));
        }
        if let Some(k) = req.api_key {
            let sealed = if k.is_empty() { None } else { Some(state.secret.seal(API_KEY, k.as_bytes())?) };
            pairs.push((API_KEY, sealed));
        }
        if let Some(t) = req.context_tokens {
            pairs.push((CONTEXT_TOKENS, Some(t.to_string())));
        }
        if let Some(t) = req.max_output_tokens {
            pairs.push((MAX_OUTPUT, Some(t.to_string())));
        }
        let mut before = Vec::new();
        for (key, _) in &pairs {
            before.push((*key, state.store.setting(key).await?));
        }
        let changes = crate::audit::changes(&before, &pairs, &[API_KEY]);
        let note = audit.filter(|_| !changes.is_empty()).map(|n| n.target("model").changes(changes));
        state.store.set_settings(&pairs, note.as_slice()).await?;
        Self::load(state).await
    }
}

/// Whether a change sends the model's calls to another origin (scheme, host, port)
/// than now: a new address, or a new provider's default where the address was the old
/// one's default.
fn moves_host(current: &ModelSettings, req: &UpdateModelSettingsRequest) -> bool {
    let provider = req.provider.unwrap_or(current.provider);
    let next = match req.base_url.as_deref().map(str::trim) {
        Some("") => default_base_url(provider),
        Some(url) => url,
        None if provider != current.provider && current.base_url == default_base_url(current.provider) => {
            default_base_url(provider)
        }
        None => &current.base_url,
    };
    match (reqwest::Url::parse(&current.base_url), reqwest::Url::parse(next)) {
        (_, Err(_)) => false,
        (Ok(now), Ok(next)) => !lens_llm::same_origin(&now, &next),
        (Err(_), Ok(_)) => true,
    }
}
