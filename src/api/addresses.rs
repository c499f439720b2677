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
