//! Categories and tags: listed by anyone, created by ADMIN and SUPER_ADMIN. A fresh store gets
//! [`SEEDED`] categories the first time categories are read (in either mode, with nothing to
//! run at deploy time); the first, `general`, is where a post without a category goes.

use tracing::info;

use super::error::CommunityError;
use super::model::{Category, Tag};
use super::record::term::{self, category_from, tag_from};
use super::service::Community;
use super::slug::{self, slugify};
use crate::fault::DataError;
use crate::ids::new_id;
use crate::ports::{Condition, Index, Item, Query, StoreError};
use crate::types::Role;

/// (slug, name, description, colour) of the categories a fresh store starts with.
pub const SEEDED: [(&str, &str, &str, &str); 5] = [
    ("general", "General", "Everything else", "#64748B"),
    (
        "translation",
        "Translation",
        "Translating books: craft, tools and questions",
        "#2563EB",
    ),
    (
        "books",
        "Books",
        "Books worth reading, in any language",
        "#16A34A",
    ),
    ("tips", "Tips", "Getting the most out of booktr", "#D97706"),
    (
        "announcements",
        "Announcements",
        "News about the service",
        "#DC2626",
    ),
];

pub(super) const DEFAULT_CATEGORY: &str = "general";
const MAX_NAME: usize = 100;
const MAX_DESCRIPTION: usize = 500;

/// A category or tag as an admin asks for it (`description` and `color` are for categories).
#[derive(Debug, Clone)]
pub struct NewTerm {
    pub name: String,
    pub slug: Option<String>,
    pub description: Option<String>,
    pub color: Option<String>,
}

#[derive(Clone, Copy)]
enum Kind {
    Category,
    Tag,
}

impl Kind {
    fn key(self) -> &'static str {
        match self {
            Kind::Category => "CATEGORY",
            Kind::Tag => "TAG",
        }
    }

    fn list(self) -> &'static str {
        match self {
            Kind::Category => "CATEGORIES",
            Kind::Tag => "TAGS",
        }
    }
}

fn pk(kind: Kind, id: &str) -> String {
    format!("{}#{id}", kind.key())
}

pub(super) fn require_admin(role: Role) -> Result<(), CommunityError> {
    match role {
        Role::Admin | Role::SuperAdmin => Ok(()),
        _ => Err(CommunityError::Forbidden(
            "only an ADMIN or SUPER_ADMIN may do this".into(),
        )),
    }
}

impl Community {
    pub async fn categories(&self) -> Result<Vec<Category>, CommunityError> {
        let mut items = self.list(Kind::Category).await?;
        if items.is_empty() {
            self.seed().await?;
            items = self.list(Kind::Category).await?;
        }
        Ok(items.iter().map(category_from).collect::<Result<_, _>>()?)
    }

    pub async fn tags(&self) -> Result<Vec<Tag>, CommunityError> {
        let items = self.list(Kind::Tag).await?;
        Ok(items.iter().map(tag_from).collect::<Result<_, _>>()?)
    }

    pub async fn create_category(
        &self,
        role: Role,
        term: NewTerm,
    ) -> Result<Category, CommunityError> {
        require_admin(role)?;
        let color = match term.color.as_deref() {
            None => "#64748B".to_string(),
            Some(c) if is_hex_color(c) => c.to_ascii_uppercase(),
            Some(c) => {
                return Err(CommunityError::Invalid(format!(
                    "color: '{c}' is not a hex colour such as #2563EB"
                )))
            }
        };
        let description = match term.description {
            Some(d) if d.chars().count() > MAX_DESCRIPTION => {
                return Err(CommunityError::Invalid(format!(
                    "description: at most {MAX_DESCRIPTION} characters"
                )))
            }
            d => d.filter(|d| !d.trim().is_empty()),
        };
        let (id, slug, name) = self.claim(Kind::Category, &term.name, term.slug).await?;
        let category = Category {
            id,
            slug,
            name,
            description,
            color,
        };
        self.store(term::category_item(
            pk(Kind::Category, &category.id),
            Kind::Category.key(),
            Kind::Category.list(),
            &category,
        ))
        .await?;
        info!(slug = %category.slug, "category created");
        Ok(category)
    }

    pub async fn create_tag(&self, role: Role, term: NewTerm) -> Result<Tag, CommunityError> {
        require_admin(role)?;
        if term.description.is_some() || term.color.is_some() {
            return Err(CommunityError::Invalid(
                "a tag has only a name and a slug".into(),
            ));
        }
        let (id, slug, name) = self.claim(Kind::Tag, &term.name, term.slug).await?;
        let tag = Tag { id, slug, name };
        self.store(term::tag_item(
            pk(Kind::Tag, &tag.id),
            Kind::Tag.key(),
            Kind::Tag.list(),
            &tag,
        ))
        .await?;
        info!(slug = %tag.slug, "tag created");
        Ok(tag)
    }

    /// A category by id or slug; `None` when there is none.
    pub(super) async fn category(&self, id_or_slug: &str) -> Result<Option<Category>, DataError> {
        self.find(Kind::Category, id_or_slug)
            .await?
            .as_ref()
            .map(category_from)
            .transpose()
            .map_err(DataError::from)
    }

    pub(super) async fn tag(&self, id_or_slug: &str) -> Result<Option<Tag>, DataError> {
        self.find(Kind::Tag, id_or_slug)
            .await?
            .as_ref()
            .map(tag_from)
            .transpose()
            .map_err(DataError::from)
    }

    /// The category posts without one go to (seeding a fresh store).
    pub(super) async fn default_category(&self) -> Result<Category, CommunityError> {
        if let Some(category) = self.category(DEFAULT_CATEGORY).await? {
            return Ok(category);
        }
        self.seed().await?;
        self.category(DEFAULT_CATEGORY)
            .await?
            .ok_or(CommunityError::NotFound("category"))
    }

    async fn find(&self, kind: Kind, id_or_slug: &str) -> Result<Option<Item>, DataError> {
        if let Some(item) = self
            .ports
            .table
            .get(&pk(kind, id_or_slug), kind.key())
            .await?
        {
            return Ok(Some(item));
        }
        match slug::owner(&self.ports, kind.key(), id_or_slug).await? {
            Some(id) => Ok(self.ports.table.get(&pk(kind, &id), kind.key()).await?),
            None => Ok(None),
        }
    }

    async fn list(&self, kind: Kind) -> Result<Vec<Item>, DataError> {
        self.ports
            .table
            .query_index(Index::Gsi1, Query::partition(kind.list()))
            .await
            .map_err(DataError::from)
    }

    /// A fresh id, the name checked, and the slug (given, or made from the name) claimed.
    async fn claim(
        &self,
        kind: Kind,
        name: &str,
        slug: Option<String>,
    ) -> Result<(String, String, String), CommunityError> {
        let name = name.trim();
        if name.is_empty() || name.chars().count() > MAX_NAME {
            return Err(CommunityError::Invalid(format!(
                "name: 1 to {MAX_NAME} characters"
            )));
        }
        let id = new_id();
        let slug = match slug {
            Some(given) => {
                let made = slugify(&given, "");
                if made != given {
                    return Err(CommunityError::Invalid(format!(
                        "slug: lowercase letters, digits and single hyphens, such as '{made}'"
                    )));
                }
                let claim = slug::claim_item(kind.key(), &given, &id);
                match self.ports.table.put(claim, Condition::NotExists).await {
                    Ok(()) => given,
                    Err(StoreError::Conflict) => {
                        return Err(CommunityError::Invalid(format!("slug: '{given}' is taken")))
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            None => {
                slug::claim(
                    &self.ports,
                    kind.key(),
                    &slugify(name, &kind.key().to_lowercase()),
                    &id,
                )
                .await?
            }
        };
        Ok((id, slug, name.to_string()))
    }

    async fn store(&self, item: Item) -> Result<(), DataError> {
        self.ports
            .table
            .put(item, Condition::NotExists)
            .await
            .map_err(DataError::from)
    }

    /// Creates the [`SEEDED`] categories that are missing; safe to run concurrently (a slug
    /// already claimed is skipped).
    async fn seed(&self) -> Result<(), DataError> {
        for (slug, name, description, color) in SEEDED {
            let id = new_id();
            let claim = slug::claim_item("CATEGORY", slug, &id);
            match self.ports.table.put(claim, Condition::NotExists).await {
                Ok(()) => {}
                Err(StoreError::Conflict) => continue,
                Err(e) => return Err(e.into()),
            }
            let category = Category {
                id: id.clone(),
                slug: slug.to_string(),
                name: name.to_string(),
                description: Some(description.to_string()),
                color: color.to_string(),
            };
            self.store(term::category_item(
                pk(Kind::Category, &id),
                Kind::Category.key(),
                Kind::Category.list(),
                &category,
            ))
            .await?;
        }
        info!("seeded the community's categories");
        Ok(())
    }
}

fn is_hex_color(c: &str) -> bool {
    c.len() == 7 && c.starts_with('#') && c[1..].chars().all(|d| d.is_ascii_hexdigit())
}
