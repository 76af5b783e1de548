//! Lambda: the user, sessions and preferences (`/api/user`, `/api/user/export`,
//! `/api/user/delete`, `/api/auth/*`, `/api/settings/preferences`).

use booktr_api::{auth_routes, preferences, user};

#[tokio::main]
async fn main() -> Result<(), booktr_functions::lambda::Error> {
    booktr_functions::lambda::serve_http(
        user::router()
            .merge(auth_routes::router())
            .merge(preferences::router()),
    )
    .await
}
