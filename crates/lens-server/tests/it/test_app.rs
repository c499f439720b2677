//! `TestApp`: a real server on 127.0.0.1:0 with a scripted model, and a client per person.

use std::{sync::Arc, time::Duration};

use futures_util::StreamExt;
use lens_llm::{ChatModel, Scripted, ScriptedTurn};
use lens_server::{AppState, Config, model_settings::ModelSource, tools::ToolRegistry};
use lens_types::{SessionResponse, StreamEvent};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

pub struct TestApp {
    pub base: String,
    pub state: AppState,
    pub dir: tempfile::TempDir,
    /// Dropping it (with the `TestApp`) shuts the server down.
    _shutdown: tokio::sync::oneshot::Sender<()>,
}

pub struct TestAppBuilder {
    sandbox: bool,
    /// The agent is set, but the sandbox is left to the settings.
    sandbox_agent: bool,
    /// The data directory in a folder of mode 0700 (as in a home folder).
    private_parent: bool,
    model: Arc<dyn ChatModel>,
    tools: ToolRegistry,
    config: Box<dyn FnOnce(&mut Config)>,
    /// SQLite and the data directory whatever `LENS_TEST_STORE` and `LENS_TEST_FILES`
    /// say: the test looks inside the database file or fills the disk under it.
    this_disk: bool,
}

impl TestAppBuilder {
    pub fn turns(mut self, turns: Vec<ScriptedTurn>) -> Self {
        self.model = Arc::new(Scripted::new(turns));
        self
    }

    pub fn model(mut self, model: Arc<dyn ChatModel>) -> Self {
        self.model = model;
        self
    }

    pub fn tools(mut self, tools: ToolRegistry) -> Self {
        self.tools = tools;
        self
    }

    /// Turns the real local sandbox on (bubblewrap, the agent cargo built beside the tests).
    pub fn sandbox(mut self) -> Self {
        self.sandbox = true;
        self
    }

    /// Makes the sandbox available without turning it on (an admin can, in the settings).
    pub fn sandbox_available(mut self) -> Self {
        self.sandbox_agent = true;
        self
    }

    /// Keeps the data directory inside a folder only its owner may enter (mode 0700), as
    /// `lens serve --data-dir ~/lens-data` does in most home folders.
    pub fn data_dir_in_private_folder(mut self) -> Self {
        self.private_parent = true;
        self
    }

    /// Keeps the embedded SQLite store and the files in the data directory when the
    /// suite runs on PostgreSQL or a bucket: for the tests that look inside `lens.db`,
    /// or fill the disk under it.
    pub fn on_this_disk(mut self) -> Self {
        self.this_disk = true;
        self
    }

    pub fn config(mut self, f: impl FnOnce(&mut Config) + 'static) -> Self {
        self.config = Box::new(f);
        self
    }

    pub async fn settings_model(self) -> TestApp {
        self.start(true).await
    }

    pub async fn build(self) -> TestApp {
        self.start(false).await
    }

    async fn start(self, from_settings: bool) -> TestApp {
        let dir = tempfile::tempdir().unwrap();
        let mut config = if self.private_parent {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
            Config::with_data_dir(dir.path().join("lens-data"))
        } else {
            Config::with_data_dir(dir.path())
        };
        (self.config)(&mut config);
        // The test gave a database of its own: a replica beside others on it, which hears
        // them and says it is alive as `lens serve` does.
        let replica = config.database_url.is_some();
        // `LENS_TEST_STORE=postgres`: the whole suite on PostgreSQL, a database per server;
        // `LENS_TEST_FILES=s3`: its files in the bucket, under a prefix per server.
        let postgres = std::env::var("LENS_TEST_STORE").as_deref() == Ok("postgres");
        if postgres && !self.this_disk && config.database_url.is_none() {
            let url = crate::postgres::fresh_database().await.expect("LENS_TEST_STORE=postgres needs scripts/postgres");
            config.database_url = Some(url.as_str().into());
        }
        let s3 = std::env::var("LENS_TEST_FILES").as_deref() == Ok("s3");
        if s3 && !self.this_disk && config.file_store.is_none() {
            config.file_store =
                Some(crate::file_store::fresh_prefix().expect("LENS_TEST_FILES=s3 needs scripts/garage"));
        }
        let models = if from_settings { ModelSource::Settings } else { ModelSource::Fixed(self.model) };
        if self.sandbox || self.sandbox_agent {
            let exe = std::env::current_exe().unwrap();
            let agent = exe.parent().and_then(|d| d.parent()).unwrap().join("lens-sandbox-agent");
            assert!(agent.is_file(), "build the agent first: cargo build -p lens-sandbox-agent");
            config.sandbox_agent = Some(agent);
        }
        if self.sandbox {
            config.sandbox = Some(true);
        }
        let state = AppState::open(config, models, self.tools).await.unwrap();
        if replica {
            state.cluster.clone().spawn();
            lens_server::chat::relay::listen(state.chats.clone());
            lens_server::chat::placement::spawn_adopter(state.chats.clone());
        }
        lens_server::sandbox::start(&state.sandbox).await.unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let previews = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        // It ends with the test's runtime.
        lens_server::serve::spawn_preview(previews, state.clone(), std::future::pending());
        let serve_state = state.clone();
        tokio::spawn(async move {
            lens_server::serve::serve(listener, serve_state, async {
                let _ = rx.await;
            })
            .await
            .unwrap();
        });
        TestApp { base, state, dir, _shutdown: tx }
    }
}

impl TestApp {
    pub fn builder() -> TestAppBuilder {
        TestAppBuilder {
            sandbox: false,
            sandbox_agent: false,
            private_parent: false,
            model: Arc::new(Scripted::new(vec![ScriptedTurn::text("Hello from the script.")])),
            tools: ToolRegistry::default(),
            config: Box::new(|_| {}),
            this_disk: false,
        }
    }

    /// A server whose model answers `words` word by word.
    pub async fn answering(words: &str) -> TestApp {
        Self::builder().turns(vec![ScriptedTurn::text(words)]).build().await
    }

    /// A server whose model answers `words` word by word, `ms` apart.
    pub async fn paced(words: &str, ms: u64) -> TestApp {
        Self::builder().turns(vec![ScriptedTurn::text(words).paced(Duration::from_millis(ms))]).build().await
    }

    pub async fn new() -> TestApp {
        Self::builder().build().await
    }

    /// The keys of the stored files under `prefix` (`uploads/1`, `chat-files/<chat>`),
    /// wherever the server keeps them, sorted.
    pub async fn stored(&self, prefix: &str) -> Vec<String> {
        let mut keys = self.state.files.blobs.list(prefix).await.unwrap();
        keys.sort();
        keys
    }

    /// A stored file's sealed bytes, wherever the server keeps them.
    pub async fn stored_bytes(&self, key: &str) -> Option<Vec<u8>> {
        use tokio::io::AsyncReadExt;
        let mut body = self.state.files.blobs.open(key).await.unwrap()?;
        let mut out = Vec::new();
        body.read_to_end(&mut out).await.unwrap();
        Some(out)
    }

    /// Replaces a stored file's sealed bytes, as a damaged disk or a hostile store would.
    pub async fn put_stored(&self, key: &str, bytes: &[u8]) {
        let mut out = self.state.files.blobs.create(key).await.unwrap();
        out.write(bytes).await.unwrap();
        out.finish().await.unwrap();
    }

    /// Whether the files are in the data directory (the default) rather than a bucket.
    pub fn files_on_disk(&self) -> bool {
        self.state.config.file_store.is_none()
    }

    /// A browser-like client with no session.
    pub fn anonymous(&self) -> Client {
        Client {
            base: self.base.clone(),
            http: reqwest::Client::builder().cookie_store(true).build().unwrap(),
            csrf: None,
            bearer: None,
        }
    }

    /// A client with no session whose connections come from `ip` (any 127.x address
    /// reaches the server's loopback listener).
    pub fn anonymous_from(&self, ip: std::net::IpAddr) -> Client {
        Client {
            base: self.base.clone(),
            http: reqwest::Client::builder().cookie_store(true).local_address(ip).build().unwrap(),
            csrf: None,
            bearer: None,
        }
    }

    /// Sets up the first account (the admin) and returns its logged-in client.
    pub async fn admin(&self) -> Client {
        let mut c = self.anonymous();
        let (status, body) = c.post("/api/v1/setup", json!({"username": "admin", "password": "admin-password"})).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        c.csrf = Some(serde_json::from_value::<SessionResponse>(body).unwrap().csrf_token);
        c
    }

    /// Has the admin make `name`, and logs it in.
    pub async fn user(&self, admin: &Client, name: &str) -> Client {
        let (status, body) = admin.post("/api/v1/users", json!({"username": name, "password": "user-password"})).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        self.login(name, "user-password").await
    }

    pub async fn login(&self, name: &str, password: &str) -> Client {
        let mut c = self.anonymous();
        let (status, body) = c.post("/api/v1/auth/login", json!({"username": name, "password": password})).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        c.csrf = Some(serde_json::from_value::<SessionResponse>(body).unwrap().csrf_token);
        c
    }
}

/// One person's HTTP client: cookies kept, CSRF header added to unsafe requests.
pub struct Client {
    pub base: String,
    pub http: reqwest::Client,
    pub csrf: Option<String>,
    pub bearer: Option<String>,
}

impl Client {
    pub fn request(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        let mut req = self.http.request(method.clone(), format!("{}{path}", self.base));
        if method != Method::GET
            && let Some(csrf) = &self.csrf
        {
            // As a browser does on every change it sends from Lens's page.
            req = req.header("x-csrf-token", csrf).header("origin", &self.base);
        }
        if let Some(token) = &self.bearer {
            req = req.bearer_auth(token);
        }
        req
    }

    pub async fn send(&self, req: reqwest::RequestBuilder) -> (StatusCode, Value) {
        let resp = req.send().await.unwrap();
        let status = resp.status();
        let text = resp.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }

    /// Follows an answer one event at a time (resuming with Last-Event-ID: the stream stays
    /// open while the answer waits) until a step asks first; the approval's id and the
    /// event's id.
    pub async fn approval_of(&self, cid: &str, aid: &str) -> (String, String) {
        let mut last: Option<String> = None;
        for _ in 0..100 {
            let events = self.events(cid, aid, last.as_deref(), 1).await;
            let Some((event_id, event)) = events.into_iter().next() else { break };
            if let StreamEvent::Approval { approval, .. } = event {
                return (approval.id, event_id);
            }
            assert!(!matches!(event, StreamEvent::Done { .. }), "the answer ended without asking");
            last = Some(event_id);
        }
        panic!("no approval asked")
    }

    /// The saved answer, following its events from `after` to the end.
    pub async fn done_after(&self, cid: &str, aid: &str, after: &str) -> lens_types::MessageView {
        let events = self.events(cid, aid, Some(after), 10_000).await;
        let Some((_, StreamEvent::Done { message })) = events.last().cloned() else { panic!("{events:?}") };
        message
    }

    /// Uploads `bytes` as `name` (multipart, as the browser does).
    pub async fn upload(&self, name: &str, bytes: Vec<u8>) -> (StatusCode, Value) {
        let part = reqwest::multipart::Part::bytes(bytes).file_name(name.to_owned());
        let form = reqwest::multipart::Form::new().part("file", part);
        self.send(self.request(Method::POST, "/api/v1/uploads").multipart(form)).await
    }

    /// Asks with attachments; the answer's id.
    pub async fn ask_with(&self, cid: &str, text: &str, attachments: &[&str]) -> (StatusCode, Value) {
        self.post(
            &format!("/api/v1/chats/{cid}/messages"),
            serde_json::json!({"text": text, "attachments": attachments}),
        )
        .await
    }

    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        self.send(self.request(Method::GET, path)).await
    }

    pub async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.send(self.request(Method::POST, path).json(&body)).await
    }

    pub async fn patch(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.send(self.request(Method::PATCH, path).json(&body)).await
    }

    pub async fn put(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.send(self.request(Method::PUT, path).json(&body)).await
    }

    pub async fn delete(&self, path: &str) -> (StatusCode, Value) {
        self.send(self.request(Method::DELETE, path)).await
    }

    /// Makes a chat and returns its id.
    pub async fn new_chat(&self) -> String {
        let (status, body) = self.post("/api/v1/chats", json!({})).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        body["id"].as_str().unwrap().to_owned()
    }

    /// Asks in `cid`; returns the answer id.
    pub async fn ask(&self, cid: &str, text: &str) -> String {
        let (status, body) = self.post(&format!("/api/v1/chats/{cid}/messages"), json!({"text": text})).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        body["answer_id"].as_str().unwrap().to_owned()
    }

    /// Follows an answer's SSE stream to its end (or `limit` events), with ids.
    pub async fn events(
        &self,
        cid: &str,
        aid: &str,
        last_id: Option<&str>,
        limit: usize,
    ) -> Vec<(String, StreamEvent)> {
        let mut req = self.request(Method::GET, &format!("/api/v1/chats/{cid}/answers/{aid}/events"));
        if let Some(id) = last_id {
            req = req.header("last-event-id", id);
        }
        let resp = req.send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        assert_eq!(resp.headers()["content-type"], "text/event-stream");
        let mut body = resp.bytes_stream();
        let mut buf = String::new();
        let mut out = Vec::new();
        let read = async {
            while let Some(chunk) = body.next().await {
                buf.push_str(std::str::from_utf8(&chunk.unwrap()).unwrap());
                while let Some(end) = buf.find("\n\n") {
                    let frame: String = buf.drain(..end + 2).collect();
                    let mut id = String::new();
                    let mut data = String::new();
                    for line in frame.lines() {
                        if let Some(v) = line.strip_prefix("id: ").or_else(|| line.strip_prefix("id:")) {
                            id = v.to_owned();
                        } else if let Some(v) = line.strip_prefix("data: ").or_else(|| line.strip_prefix("data:")) {
                            data.push_str(v);
                        }
                    }
                    if data.is_empty() {
                        continue;
                    }
                    out.push((id, serde_json::from_str::<StreamEvent>(&data).unwrap()));
                    if out.len() >= limit {
                        return;
                    }
                }
            }
        };
        // Generous: a 55 MB flood takes most of 20 s on two busy cores; the deadline only
        // bounds how long a broken stream hangs the test.
        tokio::time::timeout(Duration::from_secs(120), read).await.expect("the event stream ends");
        out
    }
}

/// The answer text the tokens of a stream add up to.
pub fn streamed_text(events: &[(String, StreamEvent)]) -> String {
    events
        .iter()
        .filter_map(|(_, e)| if let StreamEvent::Token { text } = e { Some(text.as_str()) } else { None })
        .collect()
}

/// Runs the sandbox routines until `expected` idle sandboxes in all have stopped,
/// `already` of them in a pass before; no pass may delete one. Returns how many stopped.
pub async fn tidy_until_stopped(hub: &lens_server::sandbox::SandboxHub, already: usize, expected: usize) -> usize {
    let total = std::sync::atomic::AtomicUsize::new(already);
    lens_sandbox::testing::eventually("the idle sandboxes stopping", std::time::Duration::from_secs(30), || {
        let total = &total;
        async move {
            let (later, deleted) = lens_server::sandbox::tidy(hub).await;
            assert_eq!(deleted, 0, "nothing else is deleted");
            (total.fetch_add(later, std::sync::atomic::Ordering::SeqCst) + later >= expected).then_some(())
        }
    })
    .await;
    total.into_inner()
}
