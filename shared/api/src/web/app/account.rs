//! Signing up, in and out from a browser, and the language switch. The forms post to these
//! pages, which call the same account services as `/api/auth/*` with the same limits; a wrong
//! email and a wrong password get the same answer.

use axum::extract::{RawQuery, State};
use axum::http::header::SET_COOKIE;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::Form;
use booktr_core::accounts::NewUser;
use booktr_core::types::{Email, Plan, Role};
use minijinja::context;
use serde::Deserialize;

use super::failure::page_error;
use super::i18n::{Lang, LANG_COOKIE};
use super::page::page;
use super::return_to::return_to;
use super::session::{SignedIn, TokenForm};
use crate::auth::{require_same_origin, session_token};
use crate::error::ApiError;
use crate::extract::Query;
use crate::limits::ClientAddress;
use crate::openapi::Routes;
use crate::routes::auth_routes::{with_cookie, SESSION_MAX_AGE_SECS};
use crate::state::AppState;

pub fn router() -> Routes {
    Routes::new()
        .route("/signin", get(sign_in_page).post(sign_in))
        .route("/login", get(login))
        .route("/signup", get(sign_up_page).post(sign_up))
        .route("/signout", post(sign_out))
        .route("/language", get(switch_language))
        .route("/forgot", get(forgot_page).post(forgot))
        .route("/reset", get(reset_page).post(reset))
        .route("/verify", get(verify))
}

/// `/login`, where people and password managers look for sign-in: the sign-in page, with the
/// same query (a return address).
async fn login(RawQuery(query): RawQuery) -> Redirect {
    match query {
        Some(query) => Redirect::permanent(&format!("/signin?{query}")),
        None => Redirect::permanent("/signin"),
    }
}

#[derive(Deserialize)]
struct Next {
    next: Option<String>,
    /// `done` after a password reset.
    reset: Option<String>,
    /// `yes` after signing out.
    signed_out: Option<String>,
}

/// The sign-in page; a visitor already signed in goes on to where they were going (the
/// library unless `next` says).
async fn sign_in_page(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(q): Query<Next>,
) -> Response {
    let lang = Lang::of(&headers);
    let next = return_to(q.next.as_deref());
    if SignedIn::if_any(&state, &headers, lang).await.is_some() {
        return Redirect::to(&next).into_response();
    }
    let notice = if q.reset.as_deref() == Some("done") {
        Some(lang.get("password_changed"))
    } else if q.signed_out.as_deref() == Some("yes") {
        Some(lang.get("signed_out"))
    } else {
        None
    };
    render_form(
        &state,
        lang,
        "app/signin.html",
        "sign_in",
        Shown {
            next: &next,
            error: None,
            email: "",
            notice,
        },
    )
    .await
}

/// The sign-up page; a visitor already signed in goes to the library.
async fn sign_up_page(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let lang = Lang::of(&headers);
    if SignedIn::if_any(&state, &headers, lang).await.is_some() {
        return Redirect::to("/dashboard").into_response();
    }
    render_form(
        &state,
        lang,
        "app/signup.html",
        "sign_up",
        Shown {
            next: "/dashboard",
            error: None,
            email: "",
            notice: None,
        },
    )
    .await
}

/// What a sign-in or sign-up page shows besides its form.
struct Shown<'a> {
    next: &'a str,
    error: Option<ApiError>,
    email: &'a str,
    notice: Option<&'a str>,
}

async fn render_form(
    state: &AppState,
    lang: Lang,
    template: &str,
    title_key: &str,
    shown: Shown<'_>,
) -> Response {
    let Shown {
        next,
        error,
        email,
        notice,
    } = shown;
    let status = error.as_ref().map_or(StatusCode::OK, |e| e.status);
    // Sign-in's one refusal for an unknown email and a wrong password, in words; any other
    // as the error pages say it.
    let message = error.map(|e| match e.status {
        StatusCode::UNAUTHORIZED => lang.get("wrong_credentials").to_string(),
        _ => super::failure::for_people(lang, &e),
    });
    let data = context! { next, error => message, email, notice };
    match page(state, None, lang, template, lang.get(title_key), data).await {
        Ok(mut response) => {
            *response.status_mut() = status;
            response
        }
        Err(response) => response,
    }
}

#[derive(Deserialize)]
struct SignInForm {
    email: String,
    password: String,
    next: Option<String>,
}

async fn sign_in(
    State(state): State<AppState>,
    ClientAddress(address): ClientAddress,
    headers: HeaderMap,
    Form(form): Form<SignInForm>,
) -> Response {
    let lang = Lang::of(&headers);
    let next = return_to(form.next.as_deref());
    let accounts = &state.services.accounts;
    let signed_in = async {
        require_same_origin(&headers, &state)?;
        accounts
            .limit_password_attempt(&address, Some(&form.email))
            .await?;
        Ok::<_, ApiError>(accounts.sign_in(&form.email, &form.password).await?)
    }
    .await;
    match signed_in {
        Ok((_, token)) => with_cookie(
            &state,
            &headers,
            &token,
            SESSION_MAX_AGE_SECS,
            Redirect::to(&next),
        ),
        Err(e) => {
            render_form(
                &state,
                lang,
                "app/signin.html",
                "sign_in",
                Shown {
                    next: &next,
                    error: Some(e),
                    email: &form.email,
                    notice: None,
                },
            )
            .await
        }
    }
}

#[derive(Deserialize)]
struct SignUpForm {
    email: String,
    password: String,
    name: Option<String>,
}

async fn sign_up(
    State(state): State<AppState>,
    ClientAddress(address): ClientAddress,
    headers: HeaderMap,
    Form(form): Form<SignUpForm>,
) -> Response {
    let lang = Lang::of(&headers);
    let accounts = &state.services.accounts;
    let signed_up = async {
        require_same_origin(&headers, &state)?;
        let email = Email::parse(&form.email).map_err(|e| ApiError::bad_request(e.0))?;
        accounts.limit_password_attempt(&address, None).await?;
        accounts
            .create_user(NewUser {
                email: email.clone(),
                name: form.name.clone().filter(|n| !n.trim().is_empty()),
                password: Some(form.password.clone()),
                role: Role::User,
                plan: Plan::Free,
            })
            .await?;
        let (user, token) = accounts.sign_in(email.as_str(), &form.password).await?;
        state.services.recovery.request_verification(&user).await?;
        Ok::<_, ApiError>((user, token))
    }
    .await;
    match signed_up {
        Ok((_, token)) => with_cookie(
            &state,
            &headers,
            &token,
            SESSION_MAX_AGE_SECS,
            Redirect::to("/dashboard"),
        ),
        Err(e) => {
            render_form(
                &state,
                lang,
                "app/signup.html",
                "sign_up",
                Shown {
                    next: "/dashboard",
                    error: Some(e),
                    email: &form.email,
                    notice: None,
                },
            )
            .await
        }
    }
}

async fn sign_out(
    State(state): State<AppState>,
    me: SignedIn,
    headers: HeaderMap,
    Form(form): Form<TokenForm>,
) -> Response {
    if let Err(refused) = me.check_form(form.csrf.as_deref()) {
        return page_error(me.lang, refused);
    }
    if let Some(token) = session_token(&headers) {
        if let Err(e) = state.services.accounts.sign_out(&token).await {
            return page_error(me.lang, e.into());
        }
    }
    // The sign-in page says it is done.
    with_cookie(
        &state,
        &headers,
        "",
        0,
        Redirect::to("/signin?signed_out=yes"),
    )
}

#[derive(Deserialize)]
struct Switch {
    to: Option<String>,
    back: Option<String>,
}

/// Remembers the chosen language for a year and goes back to the page it was chosen on, when
/// `back` is a page of this site.
async fn switch_language(Query(q): Query<Switch>) -> Response {
    let lang = q.to.as_deref().and_then(Lang::parse).unwrap_or(Lang::En);
    let mut response = Redirect::to(&return_to(q.back.as_deref())).into_response();
    let cookie = format!(
        "{LANG_COOKIE}={}; Path=/; SameSite=Lax; Max-Age=31536000",
        lang.code()
    );
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().append(SET_COOKIE, value);
    }
    response
}

#[derive(Deserialize)]
struct ForgotForm {
    email: String,
}

async fn forgot_page(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let lang = Lang::of(&headers);
    let title = lang.get("forgot");
    let me = SignedIn::if_any(&state, &headers, lang).await;
    page(
        &state,
        me.as_ref(),
        lang,
        "app/forgot.html",
        title,
        context! { sent => false },
    )
    .await
    .unwrap_or_else(|r| r)
}

/// The same page whether the email has an account or not; the attempts count as sign-ins do.
async fn forgot(
    State(state): State<AppState>,
    ClientAddress(address): ClientAddress,
    headers: HeaderMap,
    Form(form): Form<ForgotForm>,
) -> Response {
    let lang = Lang::of(&headers);
    let asked = async {
        require_same_origin(&headers, &state)?;
        state
            .services
            .accounts
            .limit_password_attempt(&address, Some(&form.email))
            .await?;
        state
            .services
            .recovery
            .request_password_reset(&form.email)
            .await?;
        Ok::<_, ApiError>(())
    }
    .await;
    match asked {
        Ok(()) => page(
            &state,
            SignedIn::if_any(&state, &headers, lang).await.as_ref(),
            lang,
            "app/forgot.html",
            lang.get("forgot"),
            context! { sent => true },
        )
        .await
        .unwrap_or_else(|r| r),
        Err(e) => page_error(lang, e),
    }
}

#[derive(Deserialize)]
struct TokenQuery {
    token: Option<String>,
}

async fn reset_page(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(q): Query<TokenQuery>,
) -> Response {
    let lang = Lang::of(&headers);
    let token = q.token.unwrap_or_default();
    let me = SignedIn::if_any(&state, &headers, lang).await;
    page(
        &state,
        me.as_ref(),
        lang,
        "app/reset.html",
        lang.get("new_password"),
        context! { token },
    )
    .await
    .unwrap_or_else(|r| r)
}

#[derive(Deserialize)]
struct ResetForm {
    token: String,
    password: String,
    /// `yes` (the form's box) revokes every API key of the account with the reset.
    #[serde(rename = "revokeApiKeys")]
    revoke_api_keys: Option<String>,
}

/// Counted as a sign-up is (per address, before any hashing): a token is a password of sorts,
/// and guessing at them must meet the same 429.
async fn reset(
    State(state): State<AppState>,
    ClientAddress(address): ClientAddress,
    headers: HeaderMap,
    Form(form): Form<ResetForm>,
) -> Response {
    let lang = Lang::of(&headers);
    let done = async {
        require_same_origin(&headers, &state)?;
        state
            .services
            .accounts
            .limit_password_attempt(&address, None)
            .await?;
        state
            .services
            .recovery
            .reset_password(
                &form.token,
                &form.password,
                form.revoke_api_keys.as_deref() == Some("yes"),
            )
            .await?;
        Ok::<_, ApiError>(())
    }
    .await;
    match done {
        Ok(()) => Redirect::to("/signin?reset=done").into_response(),
        Err(e) => page_error(lang, e),
    }
}

/// The emailed verification link. A GET, as links in email are; the token is spent at once.
async fn verify(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(q): Query<TokenQuery>,
) -> Response {
    let lang = Lang::of(&headers);
    let token = q.token.unwrap_or_default();
    match state.services.recovery.verify_email(&token).await {
        Ok(user) => page(
            &state,
            SignedIn::if_any(&state, &headers, lang).await.as_ref(),
            lang,
            "app/verified.html",
            lang.get("verified"),
            context! { email => user.email.to_string() },
        )
        .await
        .unwrap_or_else(|r| r),
        Err(e) => page_error(lang, e.into()),
    }
}
