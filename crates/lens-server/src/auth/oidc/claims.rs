//! What Lens reads from the provider's claims: the person's groups (at a configurable,
//! possibly dotted, claim), the name their account gets, and what their groups allow.

use serde_json::Value;

/// The groups at `claim` in `claims`: an array of strings, or one string (some providers
/// send a lone group so); a dotted name reaches into objects (`realm_access.roles`).
pub fn groups(claims: &Value, claim: &str) -> Vec<String> {
    let mut groups: Vec<String> = match find(claims, claim) {
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        Some(Value::String(one)) => vec![one.clone()],
        _ => Vec::new(),
    };
    groups.retain(|g| !g.trim().is_empty());
    groups.sort();
    groups.dedup();
    groups
}

/// The claim named `claim`; a dotted name reaches into objects, but a claim whose name
/// itself holds dots (`https://example.org/groups`) is taken whole first.
pub fn find<'a>(claims: &'a Value, claim: &str) -> Option<&'a Value> {
    claims.get(claim).or_else(|| claim.split('.').try_fold(claims, |v, key| v.get(key)))
}

/// The name a new account gets: `preferred_username`, else the e-mail address's local
/// part, else `name`, kept to the characters a Lens username may hold; `person` when none is left.
pub fn username(claims: &Value) -> String {
    let email_name = claims.get("email").and_then(Value::as_str).and_then(|e| e.split('@').next());
    let candidates = [
        claims.get("preferred_username").and_then(Value::as_str),
        email_name,
        claims.get("name").and_then(Value::as_str),
    ];
    candidates
        .into_iter()
        .flatten()
        .map(|c| {
            let kept: String = c
                .trim()
                .chars()
                .map(|ch| if ch.is_whitespace() { '.' } else { ch })
                .filter(|ch| ch.is_alphanumeric() || matches!(ch, '_' | '.' | '@' | '-'))
                .take(56)
                .collect();
            kept
        })
        .find(|k| !k.is_empty())
        .unwrap_or_else(|| "person".into())
}

/// What a person's groups let them do at sign-in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Admission {
    /// They may sign in; `admin` when the admin groups decide it (`None`: they do not).
    Allowed { admin: Option<bool> },
    /// None of their groups may sign in.
    Refused,
}

/// Whether `groups` may sign in (any of `allowed`, or anyone when it is empty) and whether
/// they are admins (any of `admins`, when it is not empty). Group names match exactly.
pub fn admission(groups: &[String], allowed: &[String], admins: &[String]) -> Admission {
    let any_of = |list: &[String]| list.iter().any(|g| groups.iter().any(|mine| mine == g.trim()));
    let admin = (!admins.is_empty()).then(|| any_of(admins));
    if allowed.is_empty() || any_of(allowed) || admin == Some(true) {
        Admission::Allowed { admin }
    } else {
        Admission::Refused
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn strings(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn groups_come_as_a_list_a_lone_string_or_a_dotted_path() {
        let claims = json!({"groups": ["staff", "ops", "staff", ""], "one": "solo",
            "realm_access": {"roles": ["admin"]}, "https://example.org/groups": ["x"]});
        assert_eq!(groups(&claims, "groups"), strings(&["ops", "staff"]));
        assert_eq!(groups(&claims, "one"), strings(&["solo"]));
        assert_eq!(groups(&claims, "realm_access.roles"), strings(&["admin"]));
        assert_eq!(groups(&claims, "https://example.org/groups"), strings(&["x"]));
        assert!(groups(&claims, "missing").is_empty());
        assert!(groups(&json!({"groups": 7}), "groups").is_empty());
    }

    #[test]
    fn a_new_account_is_named_from_the_best_claim_there_is() {
        assert_eq!(username(&json!({"preferred_username": "ada", "email": "x@y"})), "ada");
        assert_eq!(username(&json!({"email": "grace.hopper@navy.example"})), "grace.hopper");
        assert_eq!(username(&json!({"name": "Ada Lovelace"})), "Ada.Lovelace");
        assert_eq!(username(&json!({"preferred_username": "<script>", "email": "ok@x"})), "script");
        assert_eq!(username(&json!({"preferred_username": "   "})), "person");
        assert_eq!(username(&json!({"sub": "1"})), "person");
    }

    #[test]
    fn the_allowed_and_admin_groups_decide_who_comes_in_and_who_is_admin() {
        let staff = strings(&["staff"]);
        assert_eq!(admission(&staff, &[], &[]), Admission::Allowed { admin: None });
        assert_eq!(admission(&staff, &strings(&["staff"]), &[]), Admission::Allowed { admin: None });
        assert_eq!(admission(&staff, &strings(&["ops"]), &[]), Admission::Refused);
        assert_eq!(admission(&staff, &[], &strings(&["ops"])), Admission::Allowed { admin: Some(false) });
        // An admin group lets its people in even when it is not listed as allowed.
        assert_eq!(
            admission(&strings(&["ops"]), &strings(&["staff"]), &strings(&["ops"])),
            Admission::Allowed { admin: Some(true) }
        );
        assert_eq!(admission(&[], &strings(&["staff"]), &[]), Admission::Refused);
        // Names match exactly: a group is not allowed for a name that contains it.
        assert_eq!(admission(&strings(&["staff-old"]), &strings(&["staff"]), &[]), Admission::Refused);
    }
}
