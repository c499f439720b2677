//! Deleting a conversation with everything of it: its running answer stopped, its rows
//! (messages, steps, shared files, uploads, approvals: by cascade), the bytes of its
//! shared files and uploads, and its sandbox. The page assistant's conversations about a
//! library page go with the page, so a deleted document's text is not kept in them.

use super::Chats;
use crate::store::StoreError;

/// Deletes the person's conversation `cid`; `false` when they have none by that id.
pub async fn delete_chat(chats: &Chats, user_id: i64, cid: &str) -> Result<bool, StoreError> {
    if chats.store.chat(user_id, cid).await?.is_none() {
        return Ok(false);
    }
    chats.answers.stop_chat(cid);
    if chats.shared {
        // Answers other replicas write stop too, before their rows go.
        for message in chats.store.messages(cid).await? {
            if message.status == lens_types::MessageStatus::Streaming {
                super::relay::stop(chats, &message.id).await;
            }
        }
    }
    // Its uploads' rows go with the chat; their bytes are removed below.
    let uploads = chats.store.chat_upload_ids(cid).await?;
    if !chats.store.delete_chat(user_id, cid).await? {
        return Ok(false);
    }
    if let Err(e) = chats.files.shared.delete_folder(cid).await {
        tracing::warn!(chat = %cid, error = %e, "deleting the conversation's files failed");
    }
    for id in uploads {
        if let Err(e) = chats.files.uploads.delete(&user_id.to_string(), &id).await {
            tracing::warn!(chat = %cid, error = %e, "deleting an upload failed");
        }
    }
    if let Some(sandbox) = chats.sandbox.driver()
        && let Err(e) = sandbox.delete(cid).await
    {
        tracing::warn!(chat = %cid, error = %e, "deleting the sandbox failed");
    }
    Ok(true)
}

/// Deletes the page assistant's conversations on each of `pages` (paths).
pub async fn delete_page_chats(chats: &Chats, user_id: i64, pages: &[String]) -> Result<(), StoreError> {
    for page in pages {
        for chat in chats.store.list_chats(user_id, Some(page)).await? {
            delete_chat(chats, user_id, &chat.id).await?;
        }
    }
    Ok(())
}

/// The page of a library document, as the web app's address names it.
pub fn document_page(id: &str) -> String {
    format!("/library/documents/{id}")
}

/// The page of a library namespace.
pub fn namespace_page(id: &str) -> String {
    format!("/library/{id}")
}
