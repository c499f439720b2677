//! JSON requests to the server. Unsafe requests carry the session's CSRF proof.

use std::cell::RefCell;

use gloo_net::http::{Request, RequestBuilder, Response};
use lens_types::*;
use serde::{Serialize, de::DeserializeOwned};

thread_local! {
    // The browser runs one thread; the proof is per page load, set at login or from /me.
    static CSRF: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Remembers the CSRF proof for later unsafe requests.
pub fn set_csrf(token: &str) {
    CSRF.with(|c| *c.borrow_mut() = token.to_owned());
}

fn csrf() -> String {
    CSRF.with(|c| c.borrow().clone())
}

/// What a call failed with, ready to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientError {
    pub status: u16,
    pub code: Option<ErrorCode>,
    pub message: String,
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

pub type ApiResult<T> = Result<T, ClientError>;

fn network_error(e: impl std::fmt::Display) -> ClientError {
    ClientError { status: 0, code: None, message: format!("Lens could not be reached ({e}). Check your connection.") }
}

/// A response's body when it succeeded, or what it failed with. Not generic, so the
/// waiting and the error handling exist once in the .wasm rather than once per type.
async fn body(resp: Response) -> ApiResult<String> {
    let status = resp.status();
    let text = resp.text().await;
    if resp.ok() {
        return text.map_err(|e| ClientError {
            status,
            code: None,
            message: format!("the server's answer could not be read: {e}"),
        });
    }
    match text.ok().and_then(|t| serde_json::from_str::<ErrorBody>(&t).ok()) {
        Some(body) => Err(ClientError { status, code: Some(body.error.code), message: body.error.message }),
        None => Err(ClientError { status, code: None, message: format!("the server answered HTTP {status}") }),
    }
}

/// The one generic step: a body read as `T`.
fn parse<T: DeserializeOwned>(text: ApiResult<String>) -> ApiResult<T> {
    serde_json::from_str(&text?).map_err(|e| ClientError {
        status: 200,
        code: None,
        message: format!("the server's answer could not be read: {e}"),
    })
}

fn unsafe_req(builder: RequestBuilder) -> RequestBuilder {
    builder.header("X-CSRF-Token", &csrf())
}

async fn get_body(path: &str) -> ApiResult<String> {
    body(Request::get(path).send().await.map_err(network_error)?).await
}

async fn get<T: DeserializeOwned>(path: &str) -> ApiResult<T> {
    parse(get_body(path).await)
}

/// Sends `json` (already written) with the CSRF proof.
async fn send_body(builder: RequestBuilder, json: String) -> ApiResult<String> {
    let req = unsafe_req(builder).header("Content-Type", "application/json").body(json).map_err(network_error)?;
    body(req.send().await.map_err(network_error)?).await
}

async fn send_json<B: Serialize, T: DeserializeOwned>(builder: RequestBuilder, payload: &B) -> ApiResult<T> {
    let json = serde_json::to_string(payload).map_err(network_error)?;
    parse(send_body(builder, json).await)
}

/// Uploads a file the person picked (multipart, as the server takes it).
pub async fn upload(file: &web_sys::File) -> ApiResult<SharedFileRef> {
    let form = web_sys::FormData::new().map_err(|_| network_error("the browser cannot make a form"))?;
    form.append_with_blob_and_filename("file", file, &file.name())
        .map_err(|_| network_error("the browser cannot read the file"))?;
    let req = unsafe_req(Request::post("/api/v1/uploads")).body(form).map_err(network_error)?;
    parse(body(req.send().await.map_err(network_error)?).await)
}

async fn send_empty(builder: RequestBuilder) -> ApiResult<()> {
    let resp = unsafe_req(builder).send().await.map_err(network_error)?;
    body(resp).await.map(|_| ())
}

pub async fn setup_status() -> ApiResult<SetupStatus> {
    get("/api/v1/setup").await
}

pub async fn setup(req: &SetupRequest) -> ApiResult<SessionResponse> {
    let s: SessionResponse = send_json(Request::post("/api/v1/setup"), req).await?;
    set_csrf(&s.csrf_token);
    Ok(s)
}

pub async fn login(req: &CredentialsRequest) -> ApiResult<SessionResponse> {
    let s: SessionResponse = send_json(Request::post("/api/v1/auth/login"), req).await?;
    set_csrf(&s.csrf_token);
    Ok(s)
}

/// Ends the session; with single sign-on, the provider's sign-out address comes back.
pub async fn logout() -> ApiResult<SignOutResponse> {
    send_json(Request::post("/api/v1/auth/logout"), &serde_json::json!({})).await
}

pub async fn me() -> ApiResult<SessionResponse> {
    let s: SessionResponse = get("/api/v1/me").await?;
    set_csrf(&s.csrf_token);
    Ok(s)
}

pub async fn list_chats() -> ApiResult<Vec<ChatView>> {
    get("/api/v1/chats").await
}

/// The page assistant's conversations on the page at `url`.
pub async fn page_chats(url: &str) -> ApiResult<Vec<ChatView>> {
    let query = js_sys::encode_uri_component(url);
    get(&format!("/api/v1/chats?page={query}")).await
}

/// A new conversation; `page_url` ties it to a page for the page assistant.
pub async fn create_chat(page_url: Option<String>) -> ApiResult<ChatView> {
    send_json(Request::post("/api/v1/chats"), &CreateChatRequest { title: None, page_url }).await
}

pub async fn get_chat(cid: &str) -> ApiResult<ChatDetail> {
    get(&format!("/api/v1/chats/{cid}")).await
}

pub async fn rename_chat(cid: &str, title: &str) -> ApiResult<ChatView> {
    send_json(Request::patch(&format!("/api/v1/chats/{cid}")), &RenameChatRequest { title: title.to_owned() }).await
}

pub async fn delete_chat(cid: &str) -> ApiResult<()> {
    send_empty(Request::delete(&format!("/api/v1/chats/{cid}"))).await
}

pub async fn chat_sandbox(cid: &str) -> ApiResult<ChatSandboxView> {
    get(&format!("/api/v1/chats/{cid}/sandbox")).await
}

pub async fn delete_chat_sandbox(cid: &str) -> ApiResult<()> {
    send_empty(Request::delete(&format!("/api/v1/chats/{cid}/sandbox"))).await
}

/// A new conversation from `cid`'s history up to and with answer `message_id`.
pub async fn fork_chat(cid: &str, message_id: &str) -> ApiResult<ForkResponse> {
    send_json(Request::post(&format!("/api/v1/chats/{cid}/fork")), &ForkRequest { message_id: message_id.to_owned() })
        .await
}

/// Runs `code`, an edit of step `step_id` of answer `message_id`, as a new step of the
/// conversation's newest answer.
pub async fn run_again(cid: &str, message_id: &str, step_id: &str, code: &str) -> ApiResult<RunAgainResponse> {
    let req = RunAgainRequest { message_id: message_id.to_owned(), step_id: step_id.to_owned(), code: code.to_owned() };
    send_json(Request::post(&format!("/api/v1/chats/{cid}/runs")), &req).await
}

/// Lets conversation `cid`'s sandbox reach `host`.
pub async fn allow_host(cid: &str, host: &str) -> ApiResult<AllowedHosts> {
    send_json(Request::post(&format!("/api/v1/chats/{cid}/sandbox/hosts")), &AllowHostRequest { host: host.to_owned() })
        .await
}

/// A shared file as the page opens it.
pub async fn file_preview(cid: &str, fid: &str) -> ApiResult<FilePreview> {
    get(&format!("/api/v1/chats/{cid}/files/{fid}/preview")).await
}

/// How many rows a shared CSV or TSV file has.
pub async fn file_rows(cid: &str, fid: &str) -> ApiResult<RowCount> {
    get(&format!("/api/v1/chats/{cid}/files/{fid}/rows")).await
}

/// Ends the conversation's Python kernel: fresh names, same files.
pub async fn restart_python(cid: &str) -> ApiResult<()> {
    send_empty(Request::post(&format!("/api/v1/chats/{cid}/sandbox/restart-python"))).await
}

/// One folder of the conversation's workspace (`""`: the workspace itself).
pub async fn workspace_files(cid: &str, folder: &str) -> ApiResult<WorkspaceListing> {
    let folder = js_sys::encode_uri_component(folder);
    get(&format!("/api/v1/chats/{cid}/sandbox/files?path={folder}")).await
}

pub async fn send_message(
    cid: &str,
    text: &str,
    attachments: Vec<String>,
    page: Option<PageContext>,
) -> ApiResult<CreateMessageResponse> {
    let body = CreateMessageRequest { text: text.to_owned(), attachments, page };
    send_json(Request::post(&format!("/api/v1/chats/{cid}/messages")), &body).await
}

pub async fn stop_answer(cid: &str, aid: &str) -> ApiResult<()> {
    send_empty(Request::post(&format!("/api/v1/chats/{cid}/answers/{aid}/stop"))).await
}

pub async fn list_tokens() -> ApiResult<Vec<TokenView>> {
    get("/api/v1/tokens").await
}

pub async fn create_token(req: &CreateTokenRequest) -> ApiResult<CreateTokenResponse> {
    send_json(Request::post("/api/v1/tokens"), req).await
}

pub async fn delete_token(id: i64) -> ApiResult<()> {
    send_empty(Request::delete(&format!("/api/v1/tokens/{id}"))).await
}

pub async fn list_users() -> ApiResult<Vec<UserView>> {
    get("/api/v1/users").await
}

pub async fn create_user(req: &CredentialsRequest) -> ApiResult<UserView> {
    send_json(Request::post("/api/v1/users"), req).await
}

pub async fn model_settings() -> ApiResult<ModelSettingsView> {
    get("/api/v1/settings/model").await
}

pub async fn update_model_settings(req: &UpdateModelSettingsRequest) -> ApiResult<ModelSettingsView> {
    send_json(Request::put("/api/v1/settings/model"), req).await
}

pub async fn sign_in_settings() -> ApiResult<SignInSettingsView> {
    get("/api/v1/settings/sign-in").await
}

pub async fn update_sign_in_settings(req: &UpdateSignInSettingsRequest) -> ApiResult<SignInSettingsView> {
    send_json(Request::put("/api/v1/settings/sign-in"), req).await
}

pub async fn sandbox_settings() -> ApiResult<SandboxSettingsView> {
    get("/api/v1/admin/sandbox").await
}

pub async fn update_sandbox_settings(req: &UpdateSandboxSettingsRequest) -> ApiResult<SandboxSettingsView> {
    send_json(Request::put("/api/v1/admin/sandbox"), req).await
}

pub async fn storage() -> ApiResult<StorageView> {
    get("/api/v1/admin/storage").await
}

pub async fn test_model() -> ApiResult<ModelTestResult> {
    send_json(Request::post("/api/v1/settings/model/test"), &serde_json::json!({})).await
}

pub async fn model_list() -> ApiResult<ModelList> {
    get("/api/v1/settings/model/models").await
}

pub async fn groups() -> ApiResult<Vec<GroupView>> {
    get("/api/v1/admin/groups").await
}

pub async fn put_group(name: &str, req: &PutGroupRequest) -> ApiResult<GroupView> {
    let name = js_sys::encode_uri_component(name);
    send_json(Request::put(&format!("/api/v1/admin/groups/{name}")), req).await
}

pub async fn delete_group(name: &str) -> ApiResult<()> {
    let name = js_sys::encode_uri_component(name);
    send_empty(Request::delete(&format!("/api/v1/admin/groups/{name}"))).await
}

pub async fn my_rules() -> ApiResult<PersonRules> {
    get("/api/v1/me/rules").await
}

pub async fn usage() -> ApiResult<UsageReport> {
    get("/api/v1/admin/usage").await
}

/// A page of the audit trail; `query` is the filters, `?action=...&before=...`.
pub async fn audit(query: &str) -> ApiResult<AuditPage> {
    get(&format!("/api/v1/admin/audit{query}")).await
}

pub async fn gateway_preflight() -> ApiResult<GatewayPreflight> {
    get("/api/v1/admin/sandbox/gateway-preflight").await
}

/// Asks the host helper Lens was given to start the gateway on this machine.
pub async fn start_gateway() -> ApiResult<()> {
    send_empty(Request::post("/api/v1/admin/sandbox/gateway-start")).await
}

pub async fn check_sandbox() -> ApiResult<SandboxSettingsView> {
    send_json(Request::post("/api/v1/admin/sandbox/check"), &serde_json::json!({})).await
}

pub async fn share_file(cid: &str, req: &ShareFileRequest) -> ApiResult<SharedFileRef> {
    send_json(Request::post(&format!("/api/v1/chats/{cid}/files")), req).await
}

pub async fn decide_approval(id: &str, approve: bool) -> ApiResult<ApprovalRef> {
    send_json(Request::post(&format!("/api/v1/approvals/{id}")), &DecideApprovalRequest { approve }).await
}

pub async fn list_namespaces() -> ApiResult<Vec<NamespaceView>> {
    get("/api/v1/library/namespaces").await
}

pub async fn create_namespace(name: &str) -> ApiResult<NamespaceView> {
    send_json(Request::post("/api/v1/library/namespaces"), &NamespaceRequest { name: name.to_owned() }).await
}

pub async fn get_namespace(id: &str) -> ApiResult<NamespaceView> {
    get(&format!("/api/v1/library/namespaces/{id}")).await
}

pub async fn rename_namespace(id: &str, name: &str) -> ApiResult<NamespaceView> {
    let req = Request::patch(&format!("/api/v1/library/namespaces/{id}"));
    send_json(req, &NamespaceRequest { name: name.to_owned() }).await
}

pub async fn delete_namespace(id: &str) -> ApiResult<()> {
    send_empty(Request::delete(&format!("/api/v1/library/namespaces/{id}"))).await
}

pub async fn list_documents(namespace_id: &str) -> ApiResult<Vec<DocumentView>> {
    get(&format!("/api/v1/library/namespaces/{namespace_id}/documents")).await
}

pub async fn get_document(id: &str) -> ApiResult<DocumentView> {
    get(&format!("/api/v1/library/documents/{id}")).await
}

pub async fn delete_document(id: &str) -> ApiResult<()> {
    send_empty(Request::delete(&format!("/api/v1/library/documents/{id}"))).await
}

/// A document's bytes as text (the caller checks first that it is text and not large).
pub async fn document_text(id: &str) -> ApiResult<String> {
    get_body(&format!("/api/v1/library/documents/{id}/content")).await
}
