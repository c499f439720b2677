//! The server addresses the page links to directly (downloads, images shown inline);
//! the only place besides the client that spells them.

/// Where a conversation's file downloads.
pub fn chat_file_url(chat_id: &str, file_id: &str) -> String {
    format!("/api/v1/chats/{chat_id}/files/{file_id}")
}

/// A conversation's image, shown in the page.
pub fn chat_image_url(chat_id: &str, file_id: &str) -> String {
    format!("{}?inline=true", chat_file_url(chat_id, file_id))
}

/// Where a library document's content downloads.
pub fn document_content_url(id: &str) -> String {
    format!("/api/v1/library/documents/{id}/content")
}

/// A library image, shown in the page.
pub fn document_image_url(id: &str) -> String {
    format!("{}?inline=true", document_content_url(id))
}

/// A conversation as a Jupyter notebook.
pub fn chat_notebook_url(chat_id: &str) -> String {
    format!("/api/v1/chats/{chat_id}/notebook")
}

/// A folder of the conversation's workspace (`""`: all of it) as one zip.
pub fn workspace_zip_url(chat_id: &str, folder: &str) -> String {
    if folder.is_empty() {
        format!("/api/v1/chats/{chat_id}/sandbox/zip")
    } else {
        format!("/api/v1/chats/{chat_id}/sandbox/zip?path={}", js_sys::encode_uri_component(folder))
    }
}

/// The files one run made, as one zip.
pub fn run_files_zip_url(chat_id: &str, message_id: &str, step_id: &str) -> String {
    format!("/api/v1/chats/{chat_id}/sandbox/zip?message_id={message_id}&step_id={step_id}")
}

/// The audit trail as JSON Lines, with the filters of the page's query (`?action=...`).
pub fn audit_export_url(query: &str) -> String {
    format!("/api/v1/admin/audit/export{query}")
}
