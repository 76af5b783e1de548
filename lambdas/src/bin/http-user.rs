//! Lambda: the user, sessions, preferences and developer settings (`/api/user`,
//! `/api/user/export`, `/api/user/delete`, `/api/auth/*`, `/api/settings/preferences`,
//! `/api/settings/developer`).

use booktr_api::{auth_routes, developer, preferences, user};

#[tokio::main]
async fn main() -> Result<(), booktr_functions::lambda::Error> {
    booktr_functions::lambda::serve_http(
        user::router()
            .merge(auth_routes::router())
            .merge(preferences::router())
            .merge(developer::router()),
    )
    .await
}
