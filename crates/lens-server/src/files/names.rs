//! What a kept file is called and what type it is: names cleaned for showing and
//! downloading, content types by extension, and which images are shown inline.

/// Content types by extension. Anything else is `application/octet-stream`; the
/// download is an attachment either way, so the type only helps the person's system.
pub fn mime_for(name: &str) -> &'static str {
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "svg" => "image/svg+xml",
        "webp" => "image/webp",
        "pdf" => "application/pdf",
        "csv" => "text/csv",
        "txt" | "log" | "md" => "text/plain",
        "json" => "application/json",
        "html" | "htm" => "text/html",
        "xlsx" => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "docx" => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "zip" => "application/zip",
        _ => "application/octet-stream",
    }
}

/// A conversation's title as the start of a download's name: its letters, digits,
/// spaces, dashes and underscores, at most `max` characters, spaces collapsed;
/// "conversation" if nothing is left.
pub fn title_for_file(title: &str, max: usize) -> String {
    let kept: String =
        title.chars().filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_')).take(max).collect();
    let kept = kept.split_whitespace().collect::<Vec<_>>().join(" ");
    if kept.is_empty() { "conversation".into() } else { kept }
}

/// Images shown inline in a run's detail: these types, up to [`INLINE_IMAGE_MAX`].
pub fn is_inline_image(mime: &str) -> bool {
    matches!(mime, "image/png" | "image/jpeg" | "image/gif" | "image/svg+xml")
}

pub const INLINE_IMAGE_MAX: u64 = 2 * 1024 * 1024;

/// A file name fit to show and to download: the last path part, no control or format
/// characters (a right-to-left override makes `exe.png` of `gnp.exe`), at most 200
/// characters; `None` if nothing is left.
pub fn clean_name(name: &str) -> Option<String> {
    let last = name.rsplit('/').next().unwrap_or(name);
    let clean: String = last.chars().filter(|&c| !c.is_control() && !is_format(c)).take(200).collect();
    let clean = clean.trim().to_string();
    (!clean.is_empty() && clean != "." && clean != "..").then_some(clean)
}

/// Unicode's format characters (category Cf): invisible, and some reorder what is shown.
fn is_format(c: char) -> bool {
    matches!(c as u32,
        0xAD | 0x600..=0x605 | 0x61C | 0x6DD | 0x70F | 0x890..=0x891 | 0x8E2 | 0x180E | 0x200B..=0x200F
        | 0x202A..=0x202E | 0x2060..=0x2064 | 0x2066..=0x206F | 0xFEFF | 0xFFF9..=0xFFFB | 0x110BD | 0x110CD
        | 0x13430..=0x1343F | 0x1BCA0..=0x1BCA3 | 0x1D173..=0x1D17A | 0xE0001 | 0xE0020..=0xE007F)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_types() {
        assert_eq!(clean_name("out/chart.png").as_deref(), Some("chart.png"));
        assert_eq!(clean_name("a\u{7}b\n.csv").as_deref(), Some("ab.csv"));
        assert_eq!(clean_name("report\u{202E}gnp.exe").as_deref(), Some("reportgnp.exe"), "no bidi override");
        assert_eq!(clean_name("\u{200B}\u{2066}\u{FEFF}"), None, "nothing visible is nothing");
        assert_eq!(clean_name("dir/"), None);
        assert_eq!(clean_name(".."), None);
        assert_eq!(mime_for("Chart.PNG"), "image/png");
        assert_eq!(mime_for("x.exe"), "application/octet-stream");
        assert!(is_inline_image("image/svg+xml") && !is_inline_image("text/html"));
    }
}
