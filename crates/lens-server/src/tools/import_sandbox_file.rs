//! `import_sandbox_file {path, namespace?, name?}`: puts a file from the workspace into
//! the person's library. It always asks first: the approval card says what would be
//! imported where, and nothing is copied without the person's yes.

use std::sync::Arc;

use lens_llm::ToolSpec;
use lens_sandbox::SandboxDriver;
use lens_types::DocumentView;
use serde_json::json;

use super::{OutputSink, Tool, ToolContext, ToolOutcome};
use crate::files::{
    FileError, Files,
    names::{clean_name, mime_for},
};

/// Where imports land when the call names no namespace.
pub const DEFAULT_NAMESPACE: &str = "Imports";

pub struct ImportSandboxFile {
    pub driver: Arc<dyn SandboxDriver>,
    pub files: Files,
}

fn target(args: &serde_json::Value) -> (String, String, String) {
    let path = args["path"].as_str().unwrap_or("").to_owned();
    let namespace = args["namespace"].as_str().map(str::trim).filter(|n| !n.is_empty()).unwrap_or(DEFAULT_NAMESPACE);
    let name = args["name"].as_str().filter(|n| !n.trim().is_empty()).unwrap_or(&path);
    (path.clone(), namespace.to_owned(), clean_name(name).unwrap_or_default())
}

#[async_trait::async_trait]
impl Tool for ImportSandboxFile {
    fn drives_sandbox(&self) -> bool {
        true
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "import_sandbox_file",
            format!(
                "Put a file from /workspace into the person's library (a namespace of documents they keep). The \
                 person is always asked first and may decline. At most {} MB. Namespace `{DEFAULT_NAMESPACE}` if \
                 none is given; it is made if missing.",
                self.files.limits.share_max_mb
            ),
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "the file, relative to /workspace"},
                    "namespace": {"type": "string", "description": "the library namespace to put it in"},
                    "name": {"type": "string", "description": "the document's name; the file's own name if omitted"},
                },
                "required": ["path"],
            }),
        )
    }

    fn summary(&self, args: &serde_json::Value) -> String {
        let (path, namespace, _) = target(args);
        format!("Import {path} into {namespace}")
    }

    async fn approval(&self, _ctx: &ToolContext, args: &serde_json::Value) -> Option<String> {
        let (path, namespace, name) = target(args);
        Some(format!("Import `{path}` from the sandbox into your library, in `{namespace}`, as `{name}`?"))
    }

    async fn run(&self, ctx: ToolContext, args: serde_json::Value, _live: OutputSink) -> ToolOutcome {
        let (path, namespace, name) = target(&args);
        if path.is_empty() || name.is_empty() {
            return ToolOutcome::failed("import_sandbox_file needs a `path` naming a file");
        }
        let namespace = match crate::checks::clean_namespace(&namespace) {
            Ok(n) => n,
            Err(e) => return ToolOutcome::failed(e.to_string()),
        };
        match self.import(&ctx, &path, &namespace, &name).await {
            Ok(doc) => ToolOutcome {
                ok: true,
                cut: false,
                result: json!({"document_id": doc.id, "namespace": namespace, "name": doc.name, "size": doc.size})
                    .to_string(),
                output: None,
                file: None,
                network_soon: None,
            },
            Err(e) => ToolOutcome::failed(e.to_string()),
        }
    }
}

impl ImportSandboxFile {
    async fn import(
        &self,
        ctx: &ToolContext,
        path: &str,
        namespace: &str,
        name: &str,
    ) -> Result<DocumentView, FileError> {
        let (owner, id) = (ctx.user_id.to_string(), crate::ids::random_id(16));
        let place = (&self.files.library, owner.as_str(), id.as_str());
        let size = self.files.copy_out(&*self.driver, &ctx.chat_id, path, place).await?;
        let recorded = self.record(ctx, id.clone(), namespace, name, size).await;
        if recorded.is_err() {
            let _ = self.files.library.delete(&owner, &id).await;
        }
        recorded
    }

    /// The imported file's row, in `namespace` (made if missing).
    async fn record(
        &self,
        ctx: &ToolContext,
        id: String,
        namespace: &str,
        name: &str,
        size: u64,
    ) -> Result<DocumentView, FileError> {
        let store = &self.files.store;
        let ns = match store.namespace_named(ctx.user_id, namespace).await? {
            Some(ns) => ns,
            None => {
                let id = crate::ids::random_id(12);
                // A namespace made meanwhile under the same name is just as good.
                let _ = store.create_namespace(ctx.user_id, &id, namespace).await?;
                store
                    .namespace_named(ctx.user_id, namespace)
                    .await?
                    .ok_or(FileError::Store(crate::store::StoreError::NotFound))?
            }
        };
        let doc = DocumentView {
            id,
            namespace_id: ns.id,
            name: name.to_owned(),
            size,
            mime: mime_for(name).to_owned(),
            created_at: crate::now_ms(),
        };
        let max = self.files.limits.documents_per_person;
        match store.insert_document(&doc, max).await? {
            true => Ok(doc),
            false => Err(FileError::LibraryFull(max)),
        }
    }
}
