//! Lambda: the administrator's email settings (`/api/admin/emails/*`, SUPER_ADMIN only).

use booktr_api::admin_email;

#[tokio::main]
async fn main() -> Result<(), booktr_functions::lambda::Error> {
    booktr_functions::lambda::serve_http(admin_email::router()).await
}
