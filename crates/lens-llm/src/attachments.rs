//! How a person's attachments reach the model: a note after their message naming each
//! file, its size and its id, which the sandbox tools take as `attachments`. Direct
//! reads the ids back from the same note, so its runs get the message's files too.

/// One attached file, as the model is told about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    pub id: String,
    pub name: String,
    pub size: u64,
}

const OPEN: &str = "[Attached files: ";
const CLOSE: &str =
    ". Pass their ids as `attachments` to run_python or run_bash; they appear under /workspace/attachments/.]";

/// The person's text with the note about its attachments (unchanged when there are none).
pub fn with_note(text: &str, attachments: &[Attachment]) -> String {
    if attachments.is_empty() {
        return text.to_owned();
    }
    let list: Vec<String> =
        attachments.iter().map(|a| format!("{} ({} bytes, id `{}`)", a.name, a.size, a.id)).collect();
    format!("{text}\n\n{OPEN}{}{CLOSE}", list.join("; "))
}

/// The ids named in a message's attachment note.
pub fn ids_in(text: &str) -> Vec<String> {
    let Some(start) = text.rfind(OPEN) else { return Vec::new() };
    let note = &text[start..];
    let note = note.split(CLOSE).next().unwrap_or(note);
    note.split("id `").skip(1).filter_map(|rest| rest.split('`').next()).map(str::to_owned).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_names_each_file_and_its_ids_read_back() {
        let files = [
            Attachment { id: "u1".into(), name: "sales.csv".into(), size: 120 },
            Attachment { id: "u2".into(), name: "notes.txt".into(), size: 3 },
        ];
        let text = with_note("Plot this", &files);
        assert!(text.starts_with("Plot this\n\n[Attached files: sales.csv (120 bytes, id `u1`); notes.txt"));
        assert_eq!(ids_in(&text), ["u1", "u2"]);
        assert_eq!(with_note("hi", &[]), "hi");
        assert!(ids_in("no note here").is_empty());
    }
}
