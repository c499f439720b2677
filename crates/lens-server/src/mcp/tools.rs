//! The MCP tools: where sandboxes run (read by anyone, changed by admins), and the chat
//! tools an agent needs (list chats, ask and get the answer with its steps, a chat's
//! shared files). Each goes through the same code as its API route (`chat::ask` for asking), as the
//! token's person.

use std::time::Duration;

use axum::http::request::Parts;
use lens_types::{
    AuditAction, CreateChatRequest, CreateMessageRequest, MessageView, RunAgainRequest, SandboxBackend, TokenScope,
    UpdateSandboxSettingsRequest,
};
use rmcp::{
    ErrorData, ServerHandler,
    handler::server::{router::tool::ToolRouter, tool::Extension, wrapper::Json, wrapper::Parameters},
    model::{ServerCapabilities, ServerConfig},
    schemars::{self, JsonSchema},
    tool, tool_handler, tool_router,
};
use serde::{Deserialize, Serialize};

use super::McpCaller;
use crate::{AppError, AppState, auth::CurrentUser, chat::ask, sandbox_settings::SandboxSettings};

/// The longest `ask` waits for an answer unless told otherwise, and the longest it may.
const DEFAULT_WAIT_SECS: u64 = 300;
const MAX_WAIT_SECS: u64 = 1800;

/// The largest shared file `read_chat_file` hands back (larger ones: the download route).
const MAX_READ_BYTES: u64 = 8 << 20;

/// Lens's MCP server: one per session, all sharing the server's state.
#[derive(Clone)]
pub struct LensMcp {
    state: AppState,
    tool_router: ToolRouter<Self>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SandboxPlace {
    /// Sandboxes on the machine that runs Lens.
    Local,
    /// Sandboxes on an OpenShell gateway (give its address and certificate folder).
    Gateway,
    /// No sandbox: code is not run (deletes every sandbox).
    Off,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SetSandboxGateway {
    /// Where sandboxes run from now on.
    pub mode: SandboxPlace,
    /// The gateway's host:port (port 17670 when left out); for `gateway`.
    #[serde(default)]
    pub address: Option<String>,
    /// The folder on the Lens server with ca.crt and client/tls.{crt,key}; for `gateway`.
    #[serde(default)]
    pub cert_dir: Option<String>,
    /// The name the gateway's certificate carries, when it is not the address's host.
    #[serde(default)]
    pub server_name: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SandboxState {
    pub enabled: bool,
    /// `local` or `gateway`.
    pub runs_on: String,
    /// The gateway's settings and last check: shown to admins only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gateway: Option<GatewayState>,
    /// Sandboxes that exist now.
    pub sandboxes: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct GatewayState {
    pub address: String,
    pub cert_dir: String,
    pub server_name: String,
    /// Whether the last check passed, and what it found.
    pub check_ok: Option<bool>,
    pub check_message: Option<String>,
    pub version: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Chats {
    pub chats: Vec<Chat>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Chat {
    pub id: String,
    pub title: String,
    /// Milliseconds since 1970.
    pub updated_at: i64,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Ask {
    /// The conversation; a new one when left out.
    #[serde(default)]
    pub chat_id: Option<String>,
    /// The question.
    pub text: String,
    /// How long to wait for the answer, seconds (default 300, at most 1800); past it the
    /// answer so far comes back with status `streaming` (`get_answer` fetches it later).
    #[serde(default)]
    pub wait_secs: Option<u64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct AnswerRef {
    pub chat_id: String,
    pub answer_id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct RunAgain {
    pub chat_id: String,
    /// The answer and the run step (its `id`) whose code this is an edit of.
    pub answer_id: String,
    pub step_id: String,
    /// The code to run, in the step's language.
    pub code: String,
    /// How long to wait for the run, seconds (as for `ask`).
    #[serde(default)]
    pub wait_secs: Option<u64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Folder {
    pub chat_id: String,
    /// The folder, relative to `/workspace`; the workspace itself when left out.
    #[serde(default)]
    pub path: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ForkAt {
    pub chat_id: String,
    /// The answer the fork's history ends with.
    pub answer_id: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Forked {
    /// The new conversation.
    pub chat_id: String,
    pub title: String,
    /// Workspace files copied, and their bytes.
    pub files_copied: u64,
    pub bytes_copied: u64,
    /// What was not taken along (Python's names).
    pub note: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Workspace {
    pub path: String,
    pub entries: Vec<WorkspaceItem>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct WorkspaceItem {
    /// Relative to `/workspace`.
    pub path: String,
    pub is_dir: bool,
    pub size: u64,
    /// Milliseconds since 1970, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modified_at: Option<i64>,
    /// The conversation's run (counted from 1) that last made or changed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub made_by_run: Option<u32>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Answer {
    pub chat_id: String,
    pub answer_id: String,
    /// streaming, complete, stopped, interrupted or failed.
    pub status: String,
    /// The answer's text (Markdown).
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// A question the answer waits on the person for (approve it in Lens).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting_for_approval: Option<String>,
    pub steps: Vec<Step>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Step {
    /// The step's id in its answer (for `run_again`).
    pub id: String,
    pub tool: String,
    pub summary: String,
    pub status: String,
    /// For a run: its language and code, the start of stdout, the end of stderr, and how
    /// it ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stdout: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ending: Option<String>,
    /// For other tools: what the model was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<File>,
    /// How much of the model's context the step's result took, as a sentence ("about
    /// 3.0k tokens of the model's context (9%), cut to fit").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ChatRef {
    pub chat_id: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Files {
    pub files: Vec<File>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct File {
    pub id: String,
    pub name: String,
    pub size: u64,
    pub mime: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct FileRef {
    pub chat_id: String,
    pub file_id: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct FileContent {
    pub name: String,
    pub mime: String,
    pub size: u64,
    /// The contents, when they are UTF-8 text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The contents in base64, when they are not text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base64: Option<String>,
}

/// The person the tool acts for, when their token has `scope` (the API's rule: the chat
/// tools need `chat`, changing the sandbox's place needs `admin`).
fn caller(parts: &Parts, scope: TokenScope) -> Result<CurrentUser, ErrorData> {
    let user = token_owner(parts)?;
    user.require(scope).map_err(refused)?;
    Ok(user)
}

/// The person whose token opened the request, whatever its scopes.
fn token_owner(parts: &Parts) -> Result<CurrentUser, ErrorData> {
    parts
        .extensions
        .get::<McpCaller>()
        .map(|c| c.0.clone())
        .ok_or_else(|| ErrorData::invalid_request("no API token", None))
}

/// Lens's error as the tool's: the same sentence the API would give.
fn refused(e: AppError) -> ErrorData {
    let message = e.to_api().message;
    match e {
        AppError::NotFound => ErrorData::invalid_params("no such conversation, answer or file of yours", None),
        AppError::BadRequest(_) | AppError::Conflict(_) => ErrorData::invalid_params(message, None),
        AppError::Forbidden | AppError::Unauthorized | AppError::ScopeMissing(_) => {
            ErrorData::invalid_request(message, None)
        }
        _ => ErrorData::internal_error(message, None),
    }
}

fn word<T: Serialize>(value: &T) -> String {
    serde_json::to_value(value).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

fn answer_of(chat_id: &str, message: MessageView) -> Answer {
    let waiting_for_approval = message
        .steps
        .iter()
        .filter_map(|s| s.approval.as_ref())
        .find(|a| a.approved.is_none())
        .map(|a| a.question.clone());
    let steps = message
        .steps
        .into_iter()
        .map(|s| {
            let run = s.output.as_ref();
            Step {
                id: s.id.clone(),
                tool: s.tool.clone(),
                summary: s.summary.clone(),
                status: word(&s.status),
                language: run.map(|r| r.language.clone()),
                code: run.map(|r| r.code.clone()),
                stdout: run.map(|r| r.stdout.clone()),
                stderr: run.map(|r| r.stderr.clone()),
                ending: run.map(|r| r.ending.describe()),
                result: if run.is_none() { s.result.clone() } else { None },
                file: s.file.map(|f| File { id: f.id, name: f.name, size: f.size, mime: f.mime }),
                context: s.context.map(|c| c.describe()),
            }
        })
        .collect();
    Answer {
        chat_id: chat_id.to_owned(),
        answer_id: message.id,
        status: word(&message.status),
        text: message.text,
        error: message.error.map(|e| e.message),
        waiting_for_approval,
        steps,
    }
}

#[tool_router]
impl LensMcp {
    pub fn new(state: AppState) -> Self {
        Self { state, tool_router: Self::tool_router() }
    }

    /// The answer as it stands, or once it ends (or waits for an approval), within `wait`.
    async fn follow(
        &self,
        user: &CurrentUser,
        chat_id: &str,
        answer_id: &str,
        wait: Duration,
    ) -> Result<Answer, ErrorData> {
        self.own_chat(user, chat_id).await?;
        let message = ask::follow(&self.state.chats, chat_id, answer_id, wait).await.map_err(refused)?;
        Ok(answer_of(chat_id, message))
    }

    #[tool(description = "Where Lens's code sandboxes run (this machine or an OpenShell gateway), whether they are \
                          on, and how many exist. Admins also see the gateway's address and last check.")]
    async fn sandbox_gateway(&self, Extension(parts): Extension<Parts>) -> Result<Json<SandboxState>, ErrorData> {
        let user = caller(&parts, TokenScope::Chat)?;
        let settings = self.state.sandbox.settings().await.map_err(refused)?;
        self.state.sandbox.recount().await;
        Ok(Json(self.state_of(&settings, user.may(TokenScope::Admin))))
    }

    #[tool(description = "Admins: make Lens's code sandboxes run on this machine (`local`), on an OpenShell \
                          gateway (`gateway`, with its address and certificate folder; it is checked first), or \
                          turn them off (`off`). Moving or turning off deletes every sandbox.")]
    async fn set_sandbox_gateway(
        &self,
        Parameters(req): Parameters<SetSandboxGateway>,
        Extension(parts): Extension<Parts>,
    ) -> Result<Json<SandboxState>, ErrorData> {
        let user = token_owner(&parts)?;
        if !user.user.is_admin {
            return Err(ErrorData::invalid_request("only an admin may change where sandboxes run", None));
        }
        user.require(TokenScope::Admin).map_err(refused)?;
        let mut update = UpdateSandboxSettingsRequest::default();
        match req.mode {
            SandboxPlace::Off => update.enabled = Some(false),
            SandboxPlace::Local => {
                update.enabled = Some(true);
                update.backend = Some(SandboxBackend::Local);
            }
            SandboxPlace::Gateway => {
                update.enabled = Some(true);
                update.backend = Some(SandboxBackend::Gateway);
                update.gateway_address = req.address;
                update.gateway_cert_dir = req.cert_dir;
                update.gateway_server_name = req.server_name;
            }
        }
        let note = self.state.audit.by(&user, AuditAction::SettingsChanged).map(|n| n.detail("via", "mcp"));
        let settings = self.state.sandbox.update_settings(update, note).await.map_err(refused)?;
        crate::chat::relay::settings_changed(&self.state.chats).await;
        self.state.sandbox.recount().await;
        Ok(Json(self.state_of(&settings, true)))
    }

    #[tool(description = "Your conversations, newest first.")]
    async fn list_chats(&self, Extension(parts): Extension<Parts>) -> Result<Json<Chats>, ErrorData> {
        let user = caller(&parts, TokenScope::Chat)?;
        let chats = self.state.store.list_chats(user.id(), None).await.map_err(|e| refused(e.into()))?;
        let chats = chats.into_iter().map(|c| Chat { id: c.id, title: c.title, updated_at: c.updated_at }).collect();
        Ok(Json(Chats { chats }))
    }

    #[tool(description = "Ask in a conversation (a new one without chat_id) and get the answer when it ends: its \
                          text and its steps (each run's code, output and ending).")]
    async fn ask(
        &self,
        Parameters(req): Parameters<Ask>,
        Extension(parts): Extension<Parts>,
    ) -> Result<Json<Answer>, ErrorData> {
        let user = caller(&parts, TokenScope::Chat)?;
        let chats = &self.state.chats;
        let chat_id = match req.chat_id {
            Some(id) => id,
            None => {
                let title = crate::store::title::title_of(&req.text);
                let create = CreateChatRequest { title: Some(title).filter(|t| !t.is_empty()), ..Default::default() };
                ask::start_chat(chats, user.id(), &create).await.map_err(refused)?.id
            }
        };
        let question = CreateMessageRequest { text: req.text, attachments: Vec::new(), page: None };
        let asked = ask::ask(chats, user.id(), &chat_id, question).await.map_err(refused)?;
        let wait = Duration::from_secs(req.wait_secs.unwrap_or(DEFAULT_WAIT_SECS).min(MAX_WAIT_SECS));
        Ok(Json(self.follow(&user, &chat_id, &asked.answer_id, wait).await?))
    }

    #[tool(description = "Run a run step's code again, edited, in the conversation's sandbox (the same Python, the \
                          same files), as a new step of its newest answer; get that answer back when the run ends. \
                          The model reads the run with the conversation from then on.")]
    async fn run_again(
        &self,
        Parameters(req): Parameters<RunAgain>,
        Extension(parts): Extension<Parts>,
    ) -> Result<Json<Answer>, ErrorData> {
        let user = caller(&parts, TokenScope::Chat)?;
        let again = RunAgainRequest { message_id: req.answer_id, step_id: req.step_id, code: req.code };
        let started = crate::chat::run_again::run_again(&self.state.chats, user.id(), &req.chat_id, again)
            .await
            .map_err(refused)?;
        let wait = Duration::from_secs(req.wait_secs.unwrap_or(DEFAULT_WAIT_SECS).min(MAX_WAIT_SECS));
        Ok(Json(self.follow(&user, &req.chat_id, &started.answer_id, wait).await?))
    }

    #[tool(description = "One folder of a conversation's workspace (its sandbox's files): each file's size, when \
                          it changed and which run made it. Share one with the API to download it.")]
    async fn list_workspace(
        &self,
        Parameters(req): Parameters<Folder>,
        Extension(parts): Extension<Parts>,
    ) -> Result<Json<Workspace>, ErrorData> {
        let user = caller(&parts, TokenScope::Chat)?;
        self.own_chat(&user, &req.chat_id).await?;
        let folder = req.path.unwrap_or_default();
        let listed =
            crate::routes::workspace_files::listing(&self.state, &req.chat_id, folder).await.map_err(refused)?;
        let entries = listed
            .entries
            .into_iter()
            .map(|e| WorkspaceItem {
                path: e.path,
                is_dir: e.is_dir,
                size: e.size,
                modified_at: e.modified_at,
                made_by_run: e.made_by.map(|b| b.run),
            })
            .collect();
        Ok(Json(Workspace { path: listed.path, entries }))
    }

    #[tool(description = "Fork a conversation at one of its answers: a new conversation with the history up to \
                          and with it, and a copy of the workspace as it is now (Python's names are not copied).")]
    async fn fork_chat(
        &self,
        Parameters(req): Parameters<ForkAt>,
        Extension(parts): Extension<Parts>,
    ) -> Result<Json<Forked>, ErrorData> {
        let user = caller(&parts, TokenScope::Chat)?;
        let from = self.state.store.chat(user.id(), &req.chat_id).await.map_err(|e| refused(e.into()))?;
        let from = from.ok_or_else(|| refused(AppError::NotFound))?;
        let forked =
            crate::chat::fork::fork(&self.state.chats, user.id(), &from, &req.answer_id).await.map_err(refused)?;
        Ok(Json(Forked {
            chat_id: forked.chat.id,
            title: forked.chat.title,
            files_copied: forked.files_copied,
            bytes_copied: forked.bytes_copied,
            note: forked.note,
        }))
    }

    #[tool(description = "An answer as it stands now (after `ask` came back while it was still being written).")]
    async fn get_answer(
        &self,
        Parameters(req): Parameters<AnswerRef>,
        Extension(parts): Extension<Parts>,
    ) -> Result<Json<Answer>, ErrorData> {
        let user = caller(&parts, TokenScope::Chat)?;
        Ok(Json(self.follow(&user, &req.chat_id, &req.answer_id, Duration::ZERO).await?))
    }

    #[tool(description = "The files shared in a conversation (made by its runs and shared).")]
    async fn list_chat_files(
        &self,
        Parameters(req): Parameters<ChatRef>,
        Extension(parts): Extension<Parts>,
    ) -> Result<Json<Files>, ErrorData> {
        let user = caller(&parts, TokenScope::Chat)?;
        self.own_chat(&user, &req.chat_id).await?;
        let store = &self.state.store;
        let files = store.shared_files(&req.chat_id).await.map_err(|e| refused(e.into()))?;
        let files = files.into_iter().map(|f| File { id: f.id, name: f.name, size: f.size, mime: f.mime }).collect();
        Ok(Json(Files { files }))
    }

    #[tool(description = "A shared file's contents: as text when it is UTF-8, else base64 (at most 8 MiB).")]
    async fn read_chat_file(
        &self,
        Parameters(req): Parameters<FileRef>,
        Extension(parts): Extension<Parts>,
    ) -> Result<Json<FileContent>, ErrorData> {
        let user = caller(&parts, TokenScope::Chat)?;
        self.own_chat(&user, &req.chat_id).await?;
        let store = &self.state.store;
        let file = store
            .chat_file(&req.chat_id, &req.file_id)
            .await
            .map_err(|e| refused(e.into()))?
            .ok_or_else(|| refused(AppError::NotFound))?;
        if file.size > MAX_READ_BYTES {
            return Err(ErrorData::invalid_params(
                format!(
                    "`{}` is {} bytes, more than the 8 MiB this tool hands back; download it from \
                     /api/v1/chats/{}/files/{}",
                    file.name, file.size, req.chat_id, file.id
                ),
                None,
            ));
        }
        let note = self.state.audit.by(&user, AuditAction::FileDownloaded).map(|n| {
            n.chat(&req.chat_id)
                .target(file.name.clone())
                .detail("id", &file.id)
                .detail("size", file.size)
                .detail("via", "mcp")
        });
        store.append_audit(note.as_slice()).await.map_err(|e| refused(e.into()))?;
        let bytes = self.read_whole(&req.chat_id, &file.id).await.map_err(refused)?;
        let (text, base64) = match String::from_utf8(bytes) {
            Ok(text) => (Some(text), None),
            Err(e) => {
                use base64::Engine;
                (None, Some(base64::engine::general_purpose::STANDARD.encode(e.into_bytes())))
            }
        };
        Ok(Json(FileContent { name: file.name, mime: file.mime, size: file.size, text, base64 }))
    }
}

impl LensMcp {
    /// Refuses a conversation that is not the caller's as if it did not exist.
    async fn own_chat(&self, user: &CurrentUser, chat_id: &str) -> Result<(), ErrorData> {
        let chat = self.state.store.chat(user.id(), chat_id).await.map_err(|e| refused(e.into()))?;
        chat.map(|_| ()).ok_or_else(|| refused(AppError::NotFound))
    }

    fn state_of(&self, settings: &SandboxSettings, admin: bool) -> SandboxState {
        let check = self.state.sandbox.last_gateway_check();
        let gateway = admin.then(|| GatewayState {
            address: settings.gateway_address.clone(),
            cert_dir: settings.gateway_cert_dir.clone(),
            server_name: settings.gateway_server_name.clone(),
            check_ok: check.as_ref().map(|c| c.ok),
            check_message: check.as_ref().map(|c| c.message.clone()),
            version: check.and_then(|c| c.version),
        });
        SandboxState {
            enabled: settings.enabled,
            runs_on: settings.backend.as_str().to_owned(),
            gateway,
            sandboxes: self.state.sandbox.count(),
        }
    }

    /// A shared file's bytes, each chunk checked as the vault opens it.
    async fn read_whole(&self, chat_id: &str, file_id: &str) -> Result<Vec<u8>, AppError> {
        let mut reader = self.state.files.shared.open(chat_id, file_id).await.map_err(AppError::from)?;
        let mut out = Vec::new();
        while let Some(chunk) = reader.next_chunk().await.map_err(AppError::from)? {
            out.extend(chunk);
        }
        Ok(out)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for LensMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_instructions(
            "Lens: a self-hosted chat assistant that runs code in a sandbox per conversation. Ask in a chat and \
             get the answer with its runs; read the files a chat shared; admins choose where sandboxes run.",
        )
    }
}
