//! Admin Settings > Groups: what the people of each group may do. `everyone` is the
//! baseline; a person's widest group wins; the code sandbox's own settings stay the ceiling.

use lens_types::{EVERYONE, GroupRules, GroupView, NetworkMode, PutGroupRequest};
use leptos::prelude::*;

use crate::{api, pages::sign_in_settings::split_list};

/// A network mode as the table and the select show it.
fn network_name(mode: NetworkMode) -> &'static str {
    match mode {
        NetworkMode::Off => "no network",
        NetworkMode::Registries => "package registries",
        NetworkMode::Hosts => "registries and listed hosts",
    }
}

/// A share as the table shows it.
fn share_name(max_running: u64) -> String {
    match max_running {
        0 => "the site's share".into(),
        n => n.to_string(),
    }
}

#[component]
pub fn GroupsSection() -> impl IntoView {
    let groups = RwSignal::new(Vec::<GroupView>::new());
    let status = RwSignal::new(None::<String>);
    let name = RwSignal::new(EVERYONE.to_owned());
    let sandbox = RwSignal::new(true);
    let network = RwSignal::new(NetworkMode::Hosts.as_str().to_owned());
    let allow_hosts = RwSignal::new(true);
    let max_running = RwSignal::new("0".to_owned());
    let models = RwSignal::new(String::new());
    let members = RwSignal::new(String::new());
    let reload = move || {
        leptos::task::spawn_local(async move {
            match api::groups().await {
                Ok(list) => groups.set(list),
                Err(e) => status.set(Some(e.message)),
            }
        })
    };
    reload();
    let edit = move |g: GroupView| {
        name.set(g.name);
        sandbox.set(g.rules.sandbox);
        network.set(g.rules.network.as_str().to_owned());
        allow_hosts.set(g.rules.allow_hosts);
        max_running.set(g.rules.max_running.to_string());
        models.set(g.rules.models.join(", "));
        members.set(g.members.join(", "));
        status.set(None);
    };
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let Ok(share) = max_running.get_untracked().trim().parse::<u64>() else {
            status.set(Some("Sandboxes at once is a whole number (0: the site's share).".into()));
            return;
        };
        let group = name.get_untracked().trim().to_owned();
        let req = PutGroupRequest {
            rules: GroupRules {
                sandbox: sandbox.get_untracked(),
                network: NetworkMode::parse(&network.get_untracked()).unwrap_or_default(),
                allow_hosts: allow_hosts.get_untracked(),
                max_running: share,
                models: split_list(&models.get_untracked()),
            },
            members: split_list(&members.get_untracked()),
        };
        status.set(None);
        leptos::task::spawn_local(async move {
            match api::put_group(&group, &req).await {
                Ok(saved) => {
                    status.set(Some(format!("Saved “{}”. Its people's next run follows it.", saved.name)));
                    reload();
                }
                Err(e) => status.set(Some(e.message)),
            }
        });
    };
    let remove = move |group: String| {
        leptos::task::spawn_local(async move {
            match api::delete_group(&group).await {
                Ok(()) => {
                    status.set(Some(format!("Deleted “{group}”. Its people keep what their other groups allow.")));
                    reload();
                }
                Err(e) => status.set(Some(e.message)),
            }
        });
    };
    let rows = move || {
        groups
            .get()
            .into_iter()
            .map(|g| {
                let testid = format!("group-{}", g.name);
                let people: Vec<String> = g.members.iter().chain(&g.provider_members).cloned().collect();
                let (for_edit, for_delete) = (g.clone(), g.name.clone());
                let label = g.name.clone();
                view! {
                    <tr data-testid=testid>
                        <th scope="row">{g.name.clone()}</th>
                        <td>{if g.rules.sandbox { "yes" } else { "no" }}</td>
                        <td>{network_name(g.rules.network)}</td>
                        <td>{if g.rules.allow_hosts { "yes" } else { "no" }}</td>
                        <td>{share_name(g.rules.max_running)}</td>
                        <td>{if g.rules.models.is_empty() { "every model".to_owned() } else { g.rules.models.join(", ") }}</td>
                        <td>{if g.name == EVERYONE { "everyone".to_owned() } else { people.join(", ") }}</td>
                        <td>
                            <button type="button" aria-label=format!("Edit {label}") on:click=move |_| edit(for_edit.clone())>"Edit"</button>
                            <button type="button" aria-label=format!("Delete {}", g.name) on:click=move |_| remove(for_delete.clone())>"Delete"</button>
                        </td>
                    </tr>
                }
            })
            .collect_view()
    };
    view! {
        <section class="card" aria-labelledby="groups-h">
            <h2 id="groups-h">"Groups"</h2>
            <p class="muted">"What each group's people may do. Everyone is in “everyone”; a group named as your identity provider names it takes its people from their sign-in. A person may do what the most permissive of their groups allows, within the code sandbox's own settings; admins are bound by those settings only. A change reaches each person's next run."</p>
            <Show when=move || !groups.with(Vec::is_empty)>
                <div class="table-scroll"><table class="usage" data-testid="groups-table">
                    <thead><tr>
                        <th scope="col">"Group"</th><th scope="col">"Code sandbox"</th><th scope="col">"Network"</th>
                        <th scope="col">"May allow hosts"</th><th scope="col">"Sandboxes at once"</th><th scope="col">"Models"</th>
                        <th scope="col">"People"</th><th scope="col"><span class="sr-only">"Actions"</span></th>
                    </tr></thead>
                    <tbody>{rows}</tbody>
                </table></div>
            </Show>
            <Show when=move || groups.with(Vec::is_empty)>
                <p class="muted" data-testid="groups-none">"No groups yet: everyone may do all the code sandbox's settings allow."</p>
            </Show>
            <form class="form" on:submit=save data-testid="group-form" aria-labelledby="group-form-h">
                <h3 id="group-form-h">"Make or change a group"</h3>
                <label>"Name"
                    <input type="text" autocomplete="off" data-testid="group-name" required
                        prop:value=move || name.get() on:input=move |ev| name.set(event_target_value(&ev)) />
                    <span class="muted">"as the provider names it, or “everyone”"</span>
                </label>
                <label class="check">
                    <input type="checkbox" data-testid="group-sandbox" prop:checked=move || sandbox.get()
                        on:change=move |ev| sandbox.set(event_target_checked(&ev)) />
                    "May run code in the sandbox"
                </label>
                <label>"Highest network"
                    <select data-testid="group-network" prop:value=move || network.get()
                        on:change=move |ev| network.set(event_target_value(&ev))>
                        <option value="off">{network_name(NetworkMode::Off)}</option>
                        <option value="registries">{network_name(NetworkMode::Registries)}</option>
                        <option value="hosts">{network_name(NetworkMode::Hosts)}</option>
                    </select>
                </label>
                <label class="check">
                    <input type="checkbox" data-testid="group-allow-hosts" prop:checked=move || allow_hosts.get()
                        on:change=move |ev| allow_hosts.set(event_target_checked(&ev)) />
                    "May allow a host in their conversations"
                </label>
                <label>"Sandboxes at once"
                    <input type="number" min="0" data-testid="group-max-running"
                        prop:value=move || max_running.get() on:input=move |ev| max_running.set(event_target_value(&ev)) />
                    <span class="muted">"per person; 0: the site's share"</span>
                </label>
                <label>"Models"
                    <input type="text" autocomplete="off" data-testid="group-models"
                        prop:value=move || models.get() on:input=move |ev| models.set(event_target_value(&ev)) />
                    <span class="muted">"comma-separated; empty: every model"</span>
                </label>
                <label>"Members"
                    <input type="text" autocomplete="off" data-testid="group-members"
                        prop:value=move || members.get() on:input=move |ev| members.set(event_target_value(&ev)) />
                    <span class="muted">"account names, comma-separated; the provider's groups need none"</span>
                </label>
                <button type="submit" class="primary" data-testid="save-group">"Save group"</button>
                <p role="status" data-testid="groups-status">{move || status.get().unwrap_or_default()}</p>
            </form>
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_of_zero_is_the_sites() {
        assert_eq!(share_name(0), "the site's share");
        assert_eq!(share_name(3), "3");
        assert_eq!(network_name(NetworkMode::Off), "no network");
    }
}
