//! The settings, a page per section (`/dashboard/settings/{section}`: profile and password,
//! translation defaults, notifications, usage and plan, API keys, webhooks, provider keys, data
//! and account) under one section menu, and `/dashboard/notifications`. Each section's form
//! posts to its own path and comes back to its page. A key's and a webhook's secret are shown
//! once, at the top of the page that answers their creation (never in a URL), with a copy
//! button.

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::Form;
use booktr_core::accounts::AccountsError;
use booktr_core::types::Scope;
use minijinja::{context, Value};
use serde::Deserialize;

use super::failure::page_error;
use super::page::page;
use super::session::{field, SignedIn, TokenForm};
use crate::error::ApiError;
use crate::extract::{Path, Query};
use crate::limits::ClientAddress;
use crate::openapi::Routes;
use crate::routes::auth_routes::with_cookie;
use crate::state::AppState;
use crate::wire::accounts::ApiKey;
use crate::wire::developer::DeveloperSettings;
use crate::wire::events::{Delivery, Webhook};
use crate::wire::usage::UsageReport;
use crate::wire::Mirror;

/// The sections, in the menu's order: their path segment and the message that names them.
const SECTIONS: &[(&str, &str)] = &[
    ("profile", "section_profile"),
    ("preferences", "preferences"),
    ("notifications", "notification_settings"),
    ("usage", "section_usage"),
    ("keys", "api_keys"),
    ("webhooks", "webhooks"),
    ("developer", "provider_keys"),
    ("data", "section_data"),
];

pub fn router() -> Routes {
    let sections = SECTIONS.iter().fold(Routes::new(), |routes, (slug, _)| {
        routes.route(&format!("/dashboard/settings/{slug}"), get(section))
    });
    sections
        .route("/dashboard/settings", get(first_section))
        .route("/dashboard/settings/keys", post(create_key))
        .route("/dashboard/settings/keys/{id}/revoke", post(revoke_key))
        .route("/dashboard/settings/webhooks", post(create_webhook))
        .route("/dashboard/settings/webhooks/{id}", get(deliveries))
        .route("/dashboard/settings/webhooks/{id}/test", post(test_webhook))
        .route(
            "/dashboard/settings/webhooks/{id}/delete",
            post(delete_webhook),
        )
        .route("/dashboard/settings/close", post(close_account))
        .route("/dashboard/settings/profile", post(save_profile))
        .route("/dashboard/settings/password", post(change_password))
        .route("/dashboard/settings/preferences", post(save_preferences))
        .route(
            "/dashboard/settings/notifications",
            post(save_notifications),
        )
        .route("/dashboard/settings/developer", post(save_developer))
        .route("/dashboard/settings/verify", post(send_verification))
        .route("/dashboard/notifications", get(notifications))
        .route("/dashboard/notifications/read", post(mark_read))
}

/// What one action wants its section's page to say (a secret shown once, a test's answer, a
/// form's error), and the status it answers with.
#[derive(Default)]
struct Said {
    new_key: Option<Value>,
    new_webhook: Option<Value>,
    tested: Option<Value>,
    /// The password form's refusal, and the field it is about (`pw-current` or `pw-new`).
    password_error: Option<(String, &'static str)>,
    status: Option<StatusCode>,
}

async fn first_section() -> Redirect {
    Redirect::to("/dashboard/settings/profile")
}

/// What a section's page was sent back with (`?saved=1` after a form).
#[derive(Deserialize)]
struct SectionQuery {
    saved: Option<String>,
    verification: Option<String>,
    password: Option<String>,
}

/// A section's page: the last segment of its path names it.
async fn section(
    State(state): State<AppState>,
    me: SignedIn,
    uri: Uri,
    Query(q): Query<SectionQuery>,
) -> Response {
    let asked = uri.path().rsplit('/').next().unwrap_or_default();
    let Some(&(section, _)) = SECTIONS.iter().find(|(s, _)| *s == asked) else {
        return page_error(me.lang, ApiError::not_found("settings section"));
    };
    let notice = if q.password.as_deref() == Some("changed") {
        Some("password_saved")
    } else if q.verification.as_deref() == Some("sent") {
        Some("verification_sent")
    } else if q.saved.is_some() {
        Some("saved")
    } else {
        None
    };
    settings_page(&state, &me, section, notice, Said::default()).await
}

/// What a section's page shows, loaded for that section alone.
async fn section_data(state: &AppState, me: &SignedIn, section: &str) -> Result<Value, ApiError> {
    let services = &state.services;
    let user_id = me.user.id.as_str();
    Ok(match section {
        "profile" => context! {
            profile => context! {
                name => me.user.name.clone(),
                preferred_language => me.user.preferred_language.clone(),
                email => me.user.email.to_string(),
                verified => me.user.email_verified,
            },
        },
        "preferences" => context! {
            preferences => services.translations.preferences(user_id).await?,
            glossaries => Vec::<crate::wire::glossaries::Glossary>::mirror(services.glossaries.list(user_id).await?),
            models => services.usage.report(&me.user).await?.allowed_models,
        },
        "notifications" => context! {
            notify => services.events.notification_settings(user_id).await?,
        },
        "usage" => context! {
            usage => UsageReport::from(services.usage.report(&me.user).await?),
        },
        "keys" => context! {
            keys => Vec::<ApiKey>::mirror(services.accounts.list_keys(user_id).await?),
        },
        "webhooks" => context! {
            webhooks => Vec::<Webhook>::mirror(services.events.webhooks(user_id).await?),
        },
        "developer" => context! {
            developer => DeveloperSettings::from(services.developer.settings(user_id).await?),
        },
        _ => context! { phrase => booktr_core::privacy::DELETE_CONFIRMATION },
    })
}

async fn settings_page(
    state: &AppState,
    me: &SignedIn,
    section: &'static str,
    notice: Option<&str>,
    said: Said,
) -> Response {
    let data = match section_data(state, me, section).await {
        Ok(data) => data,
        Err(e) => return page_error(me.lang, e),
    };
    let sections: Vec<Value> = SECTIONS
        .iter()
        .map(|(slug, key)| context! { slug, label => me.lang.get(key) })
        .collect();
    let label = SECTIONS
        .iter()
        .find(|(s, _)| *s == section)
        .map_or("", |(_, key)| me.lang.get(key));
    let data = context! {
        section,
        section_label => label,
        sections,
        notice => notice.map(|n| me.lang.get(n)),
        new_key => said.new_key,
        new_webhook => said.new_webhook,
        tested => said.tested,
        password_error => said.password_error.as_ref().map(|(message, _)| message.clone()),
        password_field => said.password_error.as_ref().map(|(_, field)| *field),
        ..data
    };
    let title = format!("{} · {label}", me.lang.get("settings"));
    match page(state, Some(me), me.lang, "app/settings.html", &title, data).await {
        Ok(mut response) => {
            if let Some(status) = said.status {
                *response.status_mut() = status;
            }
            response
        }
        Err(response) => response,
    }
}

#[derive(Deserialize)]
struct KeyForm {
    csrf: Option<String>,
    name: String,
    /// `read` for a read-only key; anything else reads and writes.
    access: Option<String>,
    /// Days until it expires; empty for never.
    days: Option<String>,
}

async fn create_key(
    State(state): State<AppState>,
    me: SignedIn,
    Form(form): Form<KeyForm>,
) -> Response {
    if let Err(e) = me.check_form(form.csrf.as_deref()) {
        return page_error(me.lang, e);
    }
    let created = async {
        let scopes = match form.access.as_deref() {
            Some("read") => vec![Scope::Read],
            _ => vec![Scope::Read, Scope::Write],
        };
        let expires_at = match form
            .days
            .as_deref()
            .map(str::trim)
            .filter(|d| !d.is_empty())
        {
            None => None,
            Some(days) => {
                let days: i64 = days
                    .parse()
                    .ok()
                    .filter(|d| (1..=3650).contains(d))
                    .ok_or_else(|| super::failure::refused(me.lang.get("err_key_days")))?;
                Some(chrono::Utc::now() + chrono::Duration::days(days))
            }
        };
        Ok::<_, ApiError>(
            state
                .services
                .accounts
                .create_key(&me.user, &form.name, Some(scopes), expires_at)
                .await?,
        )
    }
    .await;
    match created {
        Ok(created) => {
            let said = Said {
                new_key: Some(context! { name => created.key.name, secret => created.secret }),
                ..Said::default()
            };
            settings_page(&state, &me, "keys", None, said).await
        }
        Err(e) => page_error(me.lang, e),
    }
}

async fn revoke_key(
    State(state): State<AppState>,
    me: SignedIn,
    Path(id): Path<String>,
    Form(form): Form<TokenForm>,
) -> Response {
    if let Err(e) = me.check_form(form.csrf.as_deref()) {
        return page_error(me.lang, e);
    }
    match state.services.accounts.revoke_key(&me.user.id, &id).await {
        Ok(()) => Redirect::to("/dashboard/settings/keys").into_response(),
        Err(e) => page_error(me.lang, e.into()),
    }
}

#[derive(Deserialize)]
struct WebhookForm {
    csrf: Option<String>,
    url: String,
    completed: Option<String>,
    failed: Option<String>,
}

async fn create_webhook(
    State(state): State<AppState>,
    me: SignedIn,
    Form(form): Form<WebhookForm>,
) -> Response {
    if let Err(e) = me.check_form(form.csrf.as_deref()) {
        return page_error(me.lang, e);
    }
    let mut events = Vec::new();
    if form.completed.is_some() {
        events.push("book.completed".to_string());
    }
    if form.failed.is_some() {
        events.push("translation.error".to_string());
    }
    match state
        .services
        .events
        .create_webhook(&me.user.id, &form.url, &events)
        .await
    {
        Ok(created) => {
            let said = Said {
                new_webhook: Some(
                    context! { url => created.webhook.url, secret => created.secret },
                ),
                ..Said::default()
            };
            settings_page(&state, &me, "webhooks", None, said).await
        }
        Err(e) => page_error(me.lang, e.into()),
    }
}

async fn test_webhook(
    State(state): State<AppState>,
    me: SignedIn,
    Path(id): Path<String>,
    Form(form): Form<TokenForm>,
) -> Response {
    if let Err(e) = me.check_form(form.csrf.as_deref()) {
        return page_error(me.lang, e);
    }
    match state.services.events.test_webhook(&me.user.id, &id).await {
        Ok(result) => {
            let said = Said {
                tested: Some(context! {
                    success => result.success,
                    status_code => result.status_code,
                    response => result.response,
                }),
                ..Said::default()
            };
            settings_page(&state, &me, "webhooks", None, said).await
        }
        Err(e) => page_error(me.lang, e.into()),
    }
}

async fn delete_webhook(
    State(state): State<AppState>,
    me: SignedIn,
    Path(id): Path<String>,
    Form(form): Form<TokenForm>,
) -> Response {
    if let Err(e) = me.check_form(form.csrf.as_deref()) {
        return page_error(me.lang, e);
    }
    match state.services.events.delete_webhook(&me.user.id, &id).await {
        Ok(()) => Redirect::to("/dashboard/settings/webhooks").into_response(),
        Err(e) => page_error(me.lang, e.into()),
    }
}

async fn deliveries(
    State(state): State<AppState>,
    me: SignedIn,
    Path(id): Path<String>,
) -> Response {
    let loaded = async {
        let webhooks = state.services.events.webhooks(&me.user.id).await?;
        let webhook = webhooks
            .into_iter()
            .find(|w| w.id == id)
            .ok_or_else(|| ApiError::not_found("webhook"))?;
        let deliveries = state.services.events.deliveries(&me.user.id, &id).await?;
        Ok::<_, ApiError>((webhook, deliveries))
    }
    .await;
    match loaded {
        Ok((webhook, deliveries)) => {
            let deliveries: Vec<Delivery> = Mirror::mirror(deliveries);
            let data = context! { webhook => Webhook::from(webhook), deliveries };
            let title = me.lang.get("deliveries");
            page(
                &state,
                Some(&me),
                me.lang,
                "app/deliveries.html",
                title,
                data,
            )
            .await
            .unwrap_or_else(|r| r)
        }
        Err(e) => page_error(me.lang, e),
    }
}

#[derive(Deserialize)]
struct CloseForm {
    csrf: Option<String>,
    confirmation: String,
    reason: Option<String>,
}

async fn close_account(
    State(state): State<AppState>,
    me: SignedIn,
    headers: HeaderMap,
    Form(form): Form<CloseForm>,
) -> Response {
    if let Err(e) = me.check_form(form.csrf.as_deref()) {
        return page_error(me.lang, e);
    }
    let reason = form
        .reason
        .as_deref()
        .map(str::trim)
        .filter(|r| !r.is_empty());
    match state
        .services
        .privacy
        .delete_account(&me.user, form.confirmation.trim(), reason)
        .await
    {
        // The session died with the account; the cookie goes too.
        Ok(_) => with_cookie(&state, &headers, "", 0, Redirect::to("/")),
        Err(e) => page_error(me.lang, e.into()),
    }
}

async fn notifications(State(state): State<AppState>, me: SignedIn) -> Response {
    match state.services.events.all_notifications(&me.user.id).await {
        Ok(all) => {
            // As the API shows them, but each message as it was written: the page's link leads
            // to where a completion's flagged blocks are listed (the book's review).
            let messages: Vec<String> = all.iter().map(|n| n.message.clone()).collect();
            let mut all: Vec<crate::wire::events::Notification> = Mirror::mirror(all);
            for (shown, message) in all.iter_mut().zip(messages) {
                shown.message = message;
            }
            let data = context! { notifications => all };
            let title = me.lang.get("notifications");
            page(
                &state,
                Some(&me),
                me.lang,
                "app/notifications.html",
                title,
                data,
            )
            .await
            .unwrap_or_else(|r| r)
        }
        Err(e) => page_error(me.lang, e.into()),
    }
}

async fn mark_read(
    State(state): State<AppState>,
    me: SignedIn,
    Form(form): Form<TokenForm>,
) -> Response {
    if let Err(e) = me.check_form(form.csrf.as_deref()) {
        return page_error(me.lang, e);
    }
    match state.services.events.mark_all_read(&me.user.id).await {
        Ok(_) => Redirect::to("/dashboard/notifications").into_response(),
        Err(e) => page_error(me.lang, e.into()),
    }
}

/// A form's checkbox: sent (as `on`) when ticked, absent when not.
fn ticked(fields: &[(String, String)], name: &str) -> bool {
    fields.iter().any(|(n, _)| n == name)
}

fn value(fields: &[(String, String)], name: &str) -> Option<String> {
    field(fields, name).map(|v| v.trim().to_string())
}

async fn save_profile(
    State(state): State<AppState>,
    me: SignedIn,
    Form(fields): Form<Vec<(String, String)>>,
) -> Response {
    let saved = async {
        me.check_fields(&fields)?;
        state
            .services
            .accounts
            .update_profile(
                &me.user.id,
                value(&fields, "name"),
                super::session::language_field(
                    me.lang,
                    value(&fields, "preferredLanguage").as_deref(),
                )?,
            )
            .await?;
        Ok::<_, ApiError>(())
    }
    .await;
    back_to_settings(&me, saved, "profile")
}

async fn save_preferences(
    State(state): State<AppState>,
    me: SignedIn,
    Form(fields): Form<Vec<(String, String)>>,
) -> Response {
    let saved = async {
        me.check_fields(&fields)?;
        let preferences = booktr_core::preferences::Preferences {
            default_model: value(&fields, "defaultModel").unwrap_or_default(),
            default_target_language: super::session::language_field(
                me.lang,
                value(&fields, "defaultTargetLanguage").as_deref(),
            )?
            .unwrap_or_default(),
            preserve_formatting: ticked(&fields, "preserveFormatting"),
            auto_start_translation: ticked(&fields, "autoStartTranslation"),
            default_glossary_id: value(&fields, "defaultGlossaryId").filter(|g| !g.is_empty()),
        };
        state
            .services
            .translations
            .set_preferences(&me.user.id, preferences)
            .await?;
        Ok::<_, ApiError>(())
    }
    .await;
    back_to_settings(&me, saved, "preferences")
}

async fn save_notifications(
    State(state): State<AppState>,
    me: SignedIn,
    Form(fields): Form<Vec<(String, String)>>,
) -> Response {
    let saved = async {
        me.check_fields(&fields)?;
        let patch = booktr_core::events::NotificationSettingsPatch {
            email_book_completed: Some(ticked(&fields, "emailBookCompleted")),
            email_translation_error: Some(ticked(&fields, "emailTranslationError")),
            email_weekly_digest: Some(ticked(&fields, "emailWeeklyDigest")),
            email_newsletter: Some(ticked(&fields, "emailNewsletter")),
            push_enabled: Some(ticked(&fields, "pushEnabled")),
            in_app_enabled: Some(ticked(&fields, "inAppEnabled")),
        };
        state
            .services
            .events
            .update_notification_settings(&me.user.id, patch)
            .await?;
        Ok::<_, ApiError>(())
    }
    .await;
    back_to_settings(&me, saved, "notifications")
}

/// A key field left empty keeps the key; its "remove" box removes it.
async fn save_developer(
    State(state): State<AppState>,
    me: SignedIn,
    Form(fields): Form<Vec<(String, String)>>,
) -> Response {
    let saved = async {
        me.check_fields(&fields)?;
        let change = |name: &str| {
            if ticked(&fields, &format!("remove_{name}")) {
                Some(None)
            } else {
                value(&fields, name).filter(|k| !k.is_empty()).map(Some)
            }
        };
        let patch = booktr_core::developer::DeveloperPatch {
            key_one: change("keyOne"),
            key_two: change("keyTwo"),
            key_three: change("keyThree"),
        };
        state.services.developer.update(&me.user.id, patch).await?;
        Ok::<_, ApiError>(())
    }
    .await;
    back_to_settings(&me, saved, "developer")
}

fn back_to_settings(me: &SignedIn, saved: Result<(), ApiError>, section: &str) -> Response {
    match saved {
        Ok(()) => Redirect::to(&format!("/dashboard/settings/{section}?saved=1")).into_response(),
        Err(e) => page_error(me.lang, e),
    }
}

async fn send_verification(
    State(state): State<AppState>,
    me: SignedIn,
    Form(fields): Form<Vec<(String, String)>>,
) -> Response {
    let sent = async {
        me.check_fields(&fields)?;
        state
            .services
            .recovery
            .request_verification(&me.user)
            .await?;
        Ok::<_, ApiError>(())
    }
    .await;
    match sent {
        Ok(()) => Redirect::to("/dashboard/settings/profile?verification=sent").into_response(),
        Err(e) => page_error(me.lang, e),
    }
}

#[derive(Deserialize)]
struct PasswordForm {
    csrf: Option<String>,
    current: String,
    new: String,
}

/// Changes the password with the current one; every other session ends, this one stays. A
/// wrong current password, or a new one that does not do, is said on the profile's page in an
/// error summary at the top of the form, which the form's address names (`#password-error`),
/// so that the browser shows it first, on a phone too; the script also gives it the focus. Attempts count as sign-ins do, so a borrowed session cannot guess the password.
async fn change_password(
    State(state): State<AppState>,
    me: SignedIn,
    ClientAddress(address): ClientAddress,
    Form(form): Form<PasswordForm>,
) -> Response {
    if let Err(e) = me.check_form(form.csrf.as_deref()) {
        return page_error(me.lang, e);
    }
    let accounts = &state.services.accounts;
    let changed = async {
        accounts
            .limit_password_attempt(&address, Some(me.user.email.as_str()))
            .await?;
        accounts
            .change_own_password(&me.user.id, &me.session, &form.current, &form.new)
            .await
    }
    .await;
    let refused = match changed {
        // The notice is at the top of the page (the form's address names the error summary's
        // anchor, which the answer's own replaces).
        Ok(_) => {
            return Redirect::to("/dashboard/settings/profile?password=changed#main")
                .into_response()
        }
        Err(AccountsError::WrongPassword) => {
            (me.lang.get("wrong_password").to_string(), "pw-current")
        }
        Err(e @ AccountsError::Invalid(_)) => (
            super::failure::for_people(me.lang, &ApiError::from(e)),
            "pw-new",
        ),
        Err(e) => return page_error(me.lang, e.into()),
    };
    let said = Said {
        password_error: Some(refused),
        status: Some(StatusCode::BAD_REQUEST),
        ..Said::default()
    };
    settings_page(&state, &me, "profile", None, said).await
}
