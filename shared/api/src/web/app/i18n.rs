//! The web app's words in English and Spanish: one catalogue, one entry per message with both
//! languages side by side, so a message cannot be added in one and forgotten in the other. The
//! language is the `lang` cookie's (set by the switch in every page's header), else the best
//! of `Accept-Language`, else English.

use std::collections::BTreeMap;

use axum::http::header::{ACCEPT_LANGUAGE, COOKIE};
use axum::http::HeaderMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    En,
    Es,
}

pub const LANG_COOKIE: &str = "lang";

impl Lang {
    pub fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Es => "es",
        }
    }

    pub fn parse(code: &str) -> Option<Lang> {
        let primary = code.split(['-', '_']).next()?.trim().to_ascii_lowercase();
        match primary.as_str() {
            "en" => Some(Lang::En),
            "es" => Some(Lang::Es),
            _ => None,
        }
    }

    /// The cookie's choice, else the highest-weighted language of `Accept-Language` we speak.
    pub fn of(headers: &HeaderMap) -> Lang {
        let chosen = headers
            .get_all(COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .find(|(name, _)| *name == LANG_COOKIE)
            .and_then(|(_, value)| Lang::parse(value));
        chosen
            .or_else(|| {
                let header = headers.get(ACCEPT_LANGUAGE)?.to_str().ok()?;
                let mut offered: Vec<(f32, Lang)> = header
                    .split(',')
                    .take(20)
                    .filter_map(|part| {
                        let mut pieces = part.split(';');
                        let lang = Lang::parse(pieces.next()?)?;
                        let weight = pieces
                            .find_map(|p| p.trim().strip_prefix("q="))
                            .and_then(|q| q.parse::<f32>().ok())
                            .unwrap_or(1.0);
                        Some((weight, lang))
                    })
                    .collect();
                offered.sort_by(|a, b| b.0.total_cmp(&a.0));
                offered.first().map(|(_, lang)| *lang)
            })
            .unwrap_or(Lang::En)
    }

    /// Every message in this language, by key, for the templates (`{{ t.key }}`).
    pub fn messages(self) -> BTreeMap<&'static str, &'static str> {
        MESSAGES
            .iter()
            .map(|(key, en, es)| (*key, if self == Lang::En { *en } else { *es }))
            .collect()
    }

    /// One message, None for a key the catalogue lacks.
    pub fn find(self, key: &str) -> Option<&'static str> {
        MESSAGES
            .iter()
            .find(|(k, _, _)| *k == key)
            .map(|(_, en, es)| if self == Lang::En { *en } else { *es })
    }

    /// One message.
    pub fn get(self, key: &str) -> &'static str {
        self.find(key).unwrap_or("")
    }
}

/// Key, English, Spanish.
const MESSAGES: &[(&str, &str, &str)] = &[
    ("skip", "Skip to content", "Saltar al contenido"),
    ("library", "Library", "Biblioteca"),
    ("community", "Community", "Comunidad"),
    ("sign_in", "Sign in", "Iniciar sesión"),
    ("sign_up", "Create an account", "Crear una cuenta"),
    ("sign_out", "Sign out", "Cerrar sesión"),
    ("email", "Email", "Correo electrónico"),
    ("password", "Password", "Contraseña"),
    ("password_hint", "At least 8 characters.", "Al menos 8 caracteres."),
    ("name", "Name (optional)", "Nombre (opcional)"),
    ("no_account", "No account yet?", "¿Aún no tienes cuenta?"),
    ("have_account", "Already have an account?", "¿Ya tienes cuenta?"),
    ("language", "Language", "Idioma"),
    ("notifications", "Notifications", "Notificaciones"),
    ("unread", "unread", "sin leer"),
    ("your_books", "Your books", "Tus libros"),
    ("no_books", "No books yet: upload one below.", "Aún no hay libros: sube uno abajo."),
    ("title", "Title", "Título"),
    ("status", "Status", "Estado"),
    ("progress", "Progress", "Progreso"),
    ("target_language", "Translate into", "Traducir al"),
    ("target_language_hint", "Type the language's name (French, or français) or its code (fr, pt-BR), or pick it from the list.", "Escribe el nombre del idioma (francés, o français) o su código (fr, pt-BR), o elígelo de la lista."),
    ("uploaded", "Uploaded", "Subido"),
    ("upload", "Upload a book", "Subir un libro"),
    ("upload_button", "Upload", "Subir"),
    ("file", "Book file", "Archivo del libro"),
    ("file_missing", "Choose a book file to upload.", "Elige un archivo de libro para subir."),
    ("file_hint", "EPUB, PDF, DOCX, HTML, TXT, Markdown or FictionBook (FB2), up to 50 MB. You can also drop it here.", "EPUB, PDF, DOCX, HTML, TXT, Markdown o FictionBook (FB2), hasta 50 MB. También puedes soltarlo aquí."),
    ("title_hint", "Optional: the file's own title is used otherwise.", "Opcional: si no, se usa el título del archivo."),
    ("words", "Words", "Palabras"),
    ("chapters", "Chapters", "Capítulos"),
    ("chapter", "Chapter", "Capítulo"),
    ("passes_done", "Passes done", "Pasadas hechas"),
    ("translate", "Translate", "Traducir"),
    ("start", "Start translating", "Empezar a traducir"),
    ("pause", "Pause", "Pausar"),
    ("resume", "Resume", "Reanudar"),
    ("stop", "Stop", "Detener"),
    ("model", "Model", "Modelo"),
    ("max_cost", "Spending cap in US dollars (optional)", "Límite de gasto en dólares (opcional)"),
    ("fallback_model", "Fallback model", "Modelo de respaldo"),
    ("fallback_none", "None", "Ninguno"),
    ("fallback_hint", "Optional: the passages the first model leaves flagged or of low confidence are translated again by this one, at its own price, within the spending cap.", "Opcional: los pasajes que el primer modelo deja marcados o con poca confianza los vuelve a traducir este, a su propio precio, dentro del límite de gasto."),
    ("fallback_included", "(in the estimate, for one passage in ten)", "(en la estimación, para un pasaje de cada diez)"),
    ("pause_at_terms", "Stop when the term list is ready, so I can check it", "Parar cuando la lista de términos esté lista, para revisarla"),
    ("download", "Download", "Descargar"),
    ("downloads", "Downloads", "Descargas"),
    ("rename", "Rename", "Renombrar"),
    ("save", "Save", "Guardar"),
    ("delete", "Delete this book", "Eliminar este libro"),
    ("delete_confirm", "Yes, delete the book, its translation and what my translation memory learnt from it, for good", "Sí, eliminar el libro, su traducción y lo que mi memoria de traducción aprendió de él, para siempre"),
    ("danger", "Delete", "Eliminar"),
    ("error", "Error", "Error"),
    ("warnings", "Warnings", "Avisos"),
    // The run's warning of flagged passages, said from the book's counts (`plural`, `{kinds}`
    // the count of each main flag).
    ("warning_flagged", "Translation: 1 passage flagged ({kinds}); it keeps its source text.|Translation: {n} passages flagged ({kinds}); they keep their source text.", "Traducción: 1 pasaje señalado ({kinds}); conserva su texto original.|Traducción: {n} pasajes señalados ({kinds}); conservan su texto original."),
    ("back", "Back to the library", "Volver a la biblioteca"),
    ("live", "This page updates itself while the book is being translated.", "Esta página se actualiza sola mientras se traduce el libro."),
    ("not_found", "Not found", "No encontrado"),
    ("engine", "Engine", "Motor"),
    ("glossary", "Glossary", "Glosario"),
    ("settings", "Settings", "Ajustes"),
    ("profile", "Profile", "Perfil"),
    ("forgot", "Forgot your password?", "¿Olvidaste tu contraseña?"),
    ("send_reset", "Email me a reset link", "Enviarme un enlace para restablecerla"),
    ("reset_sent", "If an account has this email, a link to choose a new password is on its way. It works for an hour.", "Si hay una cuenta con este correo, va de camino un enlace para elegir una contraseña nueva. Sirve durante una hora."),
    ("new_password", "Choose a new password", "Elige una contraseña nueva"),
    ("password_changed", "Your password is changed: sign in with it.", "Tu contraseña ha cambiado: inicia sesión con ella."),
    ("revoke_keys_on_reset", "Also revoke every API key of the account (do it if someone else may have used it; integrations then need new keys)", "Revocar también todas las claves API de la cuenta (hazlo si otra persona ha podido usarla; las integraciones necesitarán claves nuevas)"),
    ("verified", "Your email is verified", "Tu correo está verificado"),
    ("email_verified", "verified", "verificado"),
    ("email_unverified", "not verified yet", "aún sin verificar"),
    ("send_verification", "Email me a verification link", "Enviarme un enlace de verificación"),
    ("preferred_language", "Preferred language", "Idioma preferido"),
    ("preferences", "Translation defaults", "Valores por defecto de traducción"),
    ("default_model", "Model", "Modelo"),
    ("default_target_language", "Translate into", "Traducir al"),
    ("default_glossary", "Glossary", "Glosario"),
    ("preserve_formatting", "Keep the book's formatting", "Conservar el formato del libro"),
    ("auto_start", "Start translating as soon as a book is read", "Empezar a traducir en cuanto se lea un libro"),
    ("notification_settings", "Notifications", "Notificaciones"),
    ("n_email_completed", "Email me when a book is translated", "Avisarme por correo cuando un libro esté traducido"),
    ("n_email_error", "Email me when a translation fails", "Avisarme por correo cuando falle una traducción"),
    ("n_digest", "A weekly digest by email", "Un resumen semanal por correo"),
    ("n_newsletter", "The newsletter", "El boletín"),
    ("n_in_app", "Notifications in the app", "Notificaciones en la aplicación"),
    ("n_push", "Push notifications", "Notificaciones push"),
    ("provider_keys", "Your own provider keys", "Tus propias claves de proveedor"),
    ("provider_keys_hint", "Translations with a model of that provider use your key. Leave a field empty to keep its key; a new key is checked with its provider before it is stored.", "Las traducciones con un modelo de ese proveedor usan tu clave. Deja un campo vacío para conservar su clave; una clave nueva se comprueba con su proveedor antes de guardarla."),
    ("stored", "stored", "guardada"),
    ("remove_key", "Remove this key", "Quitar esta clave"),
    ("usage", "Usage this month", "Uso de este mes"),
    ("books_used", "Books", "Libros"),
    ("resets", "Resets on", "Se reinicia el"),
    ("unlimited", "unlimited", "sin límite"),
    ("api_keys", "API keys", "Claves de API"),
    ("key_name", "Key name", "Nombre de la clave"),
    ("access", "Access", "Acceso"),
    ("read_write", "Read and write", "Lectura y escritura"),
    ("read_only", "Read only", "Solo lectura"),
    ("expires_days", "Expires after (days, optional)", "Caduca tras (días, opcional)"),
    ("create_key", "Create key", "Crear clave"),
    ("secret_once", "Copy it now: it is shown this once.", "Cópiala ahora: solo se muestra esta vez."),
    ("copy", "Copy", "Copiar"),
    ("revoke", "Revoke", "Revocar"),
    ("no_keys", "No API keys.", "No hay claves de API."),
    ("last_used", "Last used", "Último uso"),
    ("never", "never", "nunca"),
    ("expires", "Expires", "Caduca"),
    ("webhooks", "Webhooks", "Webhooks"),
    ("webhook_url", "Receiver URL (https)", "URL del receptor (https)"),
    ("events", "Events", "Eventos"),
    ("event_completed", "A book is completed", "Un libro se completa"),
    ("event_failed", "A translation fails", "Una traducción falla"),
    ("add_webhook", "Add webhook", "Añadir webhook"),
    ("send_test", "Send a test", "Enviar una prueba"),
    ("remove", "Remove", "Quitar"),
    ("deliveries", "Deliveries", "Entregas"),
    ("no_webhooks", "No webhooks.", "No hay webhooks."),
    ("no_deliveries", "No deliveries yet.", "Aún no hay entregas."),
    ("test_sent", "Test delivered", "Prueba entregada"),
    ("test_failed", "Test not delivered", "Prueba no entregada"),
    ("attempts", "Attempts", "Intentos"),
    ("your_data", "Your data", "Tus datos"),
    ("export", "Download everything the account holds (JSON)", "Descargar todo lo que guarda la cuenta (JSON)"),
    ("close_account", "Close the account", "Cerrar la cuenta"),
    ("close_hint", "Everything is deleted: books, translations, keys, webhooks. Type the phrase to confirm:", "Se borra todo: libros, traducciones, claves, webhooks. Escribe la frase para confirmar:"),
    ("reason", "Why are you leaving? (optional)", "¿Por qué te vas? (opcional)"),
    ("no_notifications", "No notifications.", "No hay notificaciones."),
    ("mark_all_read", "Mark all as read", "Marcar todo como leído"),
    ("new", "new", "nueva"),
    ("date", "Date", "Fecha"),
    ("open", "Open", "Abrir"),
    ("glossaries", "Glossaries", "Glosarios"),
    // The translation memory (issue 50).
    ("memory", "Translation memory", "Memoria de traducción"),
    ("memory_use", "Use my translation memory", "Usar mi memoria de traducción"),
    ("memory_skip", "Do not use it for this book", "No usarla en este libro"),
    ("memory_hint", "Passages translated and accepted before in your other books are taken as they are, free; this book's are remembered. Not used: this book neither takes nor gives.", "Los pasajes traducidos y aceptados antes en tus otros libros se toman tal cual, gratis; los de este libro se recuerdan. Sin usarla, este libro ni toma ni da."),
    ("memory_quoted", "{n} passages from your memory, free", "{n} pasajes de tu memoria, gratis"),
    ("memory_intro", "Every passage you accept (the model's text a translation stores, your edits, the re-translations you accept) is remembered per language pair; a later book with the same passage takes it without asking a model, and a close passage is shown to the model.", "Cada pasaje que aceptas (el texto del modelo que guarda una traducción, tus correcciones, las retraducciones que aceptas) se recuerda por par de idiomas; un libro posterior con el mismo pasaje lo toma sin preguntar a un modelo, y un pasaje parecido se muestra al modelo."),
    ("memory_empty", "Your translation memory is empty: it fills as your books are translated.", "Tu memoria de traducción está vacía: se llena a medida que se traducen tus libros."),
    ("memory_pair", "Language pair", "Par de idiomas"),
    ("memory_entries", "Passages", "Pasajes"),
    ("memory_full", "This pair is full: new passages are not remembered until you delete some (export it first to keep them). Passages not remembered:", "Este par está lleno: los pasajes nuevos no se recuerdan hasta que borres algunos (expórtalo antes para conservarlos). Pasajes no recordados:"),
    ("memory_open", "See its passages", "Ver sus pasajes"),
    ("memory_export", "Export as TMX", "Exportar como TMX"),
    ("memory_export_next", "Export the next passages as TMX", "Exportar los pasajes siguientes como TMX"),
    ("memory_import", "Import a TMX file", "Importar un archivo TMX"),
    ("memory_import_pair", "Import into the pair", "Importar en el par"),
    ("memory_source_lang", "From (language code)", "De (código de idioma)"),
    ("memory_target_lang", "Into (language code)", "A (código de idioma)"),
    ("memory_tmx_file", "TMX file (at most 4 MB)", "Archivo TMX (4 MB como máximo)"),
    ("memory_delete_pair", "Delete every passage of this pair", "Borrar todos los pasajes de este par"),
    ("memory_delete_entry", "Forget", "Olvidar"),
    ("memory_origin_model", "model", "modelo"),
    ("memory_origin_edit", "your edit", "tu corrección"),
    ("memory_origin_proposal", "accepted re-translation", "retraducción aceptada"),
    ("memory_origin_import", "imported", "importado"),
    ("memory_imported", "Imported: {n} passages remembered, {r} refused, {s} without both languages.", "Importado: {n} pasajes recordados, {r} rechazados, {s} sin ambos idiomas."),
    ("my_posts", "Your posts", "Tus publicaciones"),
    ("write_post", "Write a post", "Escribir una publicación"),
    ("public_page", "Public page", "Página pública"),
    ("comments", "Comments", "Comentarios"),
    ("no_posts", "No posts yet.", "Aún no hay publicaciones."),
    ("content_markdown", "Text (Markdown)", "Texto (Markdown)"),
    ("excerpt", "Summary (optional; the first lines otherwise)", "Resumen (opcional; si no, las primeras líneas)"),
    ("preview", "Preview", "Vista previa"),
    ("save_draft", "Save as draft", "Guardar como borrador"),
    ("publish", "Publish", "Publicar"),
    ("category", "Category", "Categoría"),
    ("tags", "Tags", "Etiquetas"),
    ("reply", "Reply", "Responder"),
    ("your_reply", "Your reply", "Tu respuesta"),
    ("no_comments", "No comments yet.", "Aún no hay comentarios."),
    ("your_comment", "Your comment", "Tu comentario"),
    ("comment_hint", "Comments appear once a moderator approves them.", "Los comentarios aparecen cuando un moderador los aprueba."),
    ("comment", "Comment", "Comentar"),
    ("moderation", "Comments to moderate", "Comentarios por moderar"),
    ("email_settings", "Email settings", "Ajustes de correo"),
    ("approve", "Approve", "Aprobar"),
    ("spam", "Spam", "Spam"),
    ("reject", "Delete", "Eliminar"),
    ("no_pending", "Nothing waits for moderation.", "No hay nada pendiente de moderar."),
    ("smtp_server", "SMTP server", "Servidor SMTP"),
    ("sender_prefix", "Sender address", "Dirección del remitente"),
    ("sender_name", "Sender name", "Nombre del remitente"),
    ("reply_to", "Reply-to address", "Dirección de respuesta"),
    ("sandbox", "Sandbox: mail only the allowed recipients", "Modo de pruebas: enviar solo a los destinatarios permitidos"),
    ("mail_logged", "none configured: emails are not sent (booktr serve keeps them in its data directory's outbox)", "ninguno configurado: los correos no se envían (booktr serve los guarda en la carpeta outbox de su directorio de datos)"),
    ("sender", "Sender", "Remitente"),
    ("last_test", "Last test", "Última prueba"),
    ("test_connection", "Test the connection", "Probar la conexión"),
    ("test_to", "Send a test email to", "Enviar un correo de prueba a"),
    ("send_test_email", "Send the test email", "Enviar el correo de prueba"),
    ("admin", "Admin", "Administración"),
    ("share", "Share", "Compartir"),
    ("choice_hint", "The book's page quotes the translation with these before it starts; they can still be changed there.", "La página del libro presupuesta la traducción con estas opciones antes de empezar; allí aún se pueden cambiar."),
    ("flagged", "Flagged passages", "Pasajes señalados"),
    ("quality", "Checks", "Comprobaciones"),
    ("no_flags", "no passage flagged.", "ningún pasaje señalado."),
    // A passage can fail several checks: the book's page counts each once, under its main
    // flag (`QualitySummary::main_flags`), so that the counts add up to the passages flagged.
    ("count_passages_flagged", "1 passage flagged|{n} passages flagged", "1 pasaje señalado|{n} pasajes señalados"),
    ("flags_main_hint", "each once, by what went most wrong", "cada uno una vez, por lo más grave"),
    ("flag_missing", "{n} not returned|{n} not returned", "{n} no devuelto|{n} no devueltos"),
    ("flag_brokenMarks", "{n} with broken formatting|{n} with broken formatting", "{n} con el formato roto|{n} con el formato roto"),
    ("flag_untranslated", "{n} untranslated|{n} untranslated", "{n} sin traducir|{n} sin traducir"),
    ("flag_wrongLanguage", "{n} in the wrong language|{n} in the wrong language", "{n} en otro idioma|{n} en otro idioma"),
    ("flag_length", "{n} of implausible length|{n} of implausible length", "{n} de longitud inverosímil|{n} de longitud inverosímil"),
    ("flag_refusal", "{n} refused or commented on|{n} refused or commented on", "{n} rechazado o comentado|{n} rechazados o comentados"),
    ("flag_merged", "{n} merged with a neighbour|{n} merged with a neighbour", "{n} unido al siguiente|{n} unidos al siguiente"),
    ("flag_repeated", "{n} repeated|{n} repeated", "{n} repetido|{n} repetidos"),
    ("flag_truncated", "{n} cut off|{n} cut off", "{n} cortado|{n} cortados"),
    ("flag_duplicate", "{n} the same as another passage|{n} the same as other passages", "{n} igual que otro pasaje|{n} iguales que otros pasajes"),
    ("flag_numbers", "{n} with numbers unlike the source's|{n} with numbers unlike the source's", "{n} con números distintos de los del original|{n} con números distintos de los del original"),
    ("flag_names", "{n} with names unlike the source's|{n} with names unlike the source's", "{n} con nombres distintos de los del original|{n} con nombres distintos de los del original"),
    ("changed_by_review", "Changed by the review", "Cambiados en la revisión"),
    ("low_confidence", "Passages to read first (low confidence)", "Pasajes que leer primero (confianza baja)"),
    ("model_profile", "How the model was asked", "Cómo se consultó al modelo"),
    ("profile_hosted", "a hosted model, many paragraphs a request, every one reviewed", "un modelo alojado, muchos párrafos por petición, todos revisados"),
    ("profile_small", "a small model, one paragraph a request, the doubtful ones reviewed", "un modelo pequeño, un párrafo por petición, revisados los dudosos"),
    ("changed_by_polish", "by the polish", "en el pulido"),
    ("count_changes_not_kept", "1 change not kept (it failed a check)|{n} changes not kept (they failed a check)", "1 cambio descartado (no pasó una comprobación)|{n} cambios descartados (no pasaron una comprobación)"),
    ("repaired", "Repaired by a second request", "Reparados con una segunda petición"),
    ("removed_lines", "Remarks the model added around the text, left out", "Comentarios que el modelo añadió al texto, omitidos"),
    ("source_language", "Written in", "Escrito en"),
    ("read_side_by_side", "Read it beside the original", "Leerlo junto al original"),
    ("shared_at", "Anyone with this link can read the translation:", "Cualquiera con este enlace puede leer la traducción:"),
    ("share_days", "Link expires after (days, optional)", "El enlace caduca tras (días, opcional)"),
    ("share_public", "List it publicly (search engines may find it)", "Publicarlo (los buscadores pueden encontrarlo)"),
    ("share_create", "Create a share link", "Crear un enlace para compartir"),
    ("no_glossaries", "No glossaries yet.", "Aún no hay glosarios."),
    ("new_glossary", "New glossary", "Nuevo glosario"),
    ("glossary_name", "Name", "Nombre"),
    ("description", "Description (optional)", "Descripción (opcional)"),
    ("csv_file", "Entries from a CSV file (optional)", "Entradas de un archivo CSV (opcional)"),
    ("csv_hint", "One entry per line: term,translation[,context]; a first line starting with \"source\" is a header.", "Una entrada por línea: término,traducción[,contexto]; una primera línea que empiece por \"source\" es la cabecera."),
    ("csv_missing", "Choose a CSV file to import.", "Elige un archivo CSV para importar."),
    ("create_glossary", "Create glossary", "Crear glosario"),
    ("count_entries", "1 entry|{n} entries", "1 entrada|{n} entradas"),
    ("entries_title", "Entries", "Entradas"),
    ("entries_hint", "Empty a row to remove its entry; fill the empty rows to add entries.", "Vacía una fila para quitar su entrada; rellena las filas vacías para añadir entradas."),
    ("term", "Term", "Término"),
    ("translation", "Translation", "Traducción"),
    ("context", "Context", "Contexto"),
    ("export_csv", "Download as CSV", "Descargar como CSV"),
    ("import_csv", "Replace the entries with a CSV file", "Sustituir las entradas por un archivo CSV"),
    ("import", "Import", "Importar"),
    ("delete_glossary", "Delete this glossary", "Eliminar este glosario"),
    ("quote", "Update the quote", "Actualizar el presupuesto"),
    ("tokens", "Tokens", "Tokens"),
    ("tokens_in", "in", "de entrada"),
    ("tokens_out", "out", "de salida"),
    ("cost", "Expected cost", "Coste previsto"),
    ("time", "Expected time", "Tiempo previsto"),
    ("bilingual", "bilingual", "bilingüe"),
    ("nothing_to_translate", "Every chapter is already translated with these choices: pick another model, glossary or language to translate the book again.", "Todos los capítulos ya están traducidos con estas opciones: elige otro modelo, glosario o idioma para volver a traducir el libro."),
    ("forbidden", "This form has expired or did not come from this site. Go back, reload the page and try again.", "Este formulario ha caducado o no viene de este sitio. Vuelve atrás, recarga la página e inténtalo de nuevo."),
    // Values said in words (`web::words`).
    ("free", "free", "gratis"),
    ("less_than", "less than", "menos de"),
    ("language_unknown", "not recognised", "no reconocido"),
    ("engine_offline", "offline demo engine", "motor de demostración sin conexión"),
    ("engine_offline_hint", "No provider key is set for this model, so the offline demo engine writes a visibly fake translation (vowels accented: \"Càll mé Ìshmàél\"): free, and useful to see the whole process work. Add your own provider key in the settings for a real translation.", "No hay clave de proveedor para este modelo, así que el motor de demostración sin conexión escribe una traducción visiblemente falsa (vocales acentuadas: \"Càll mé Ìshmàél\"): es gratis y sirve para ver todo el proceso. Añade tu propia clave de proveedor en los ajustes para una traducción real."),
    ("state_uploaded", "uploaded", "subido"),
    ("state_extracting", "reading the file", "leyendo el archivo"),
    ("state_extracted", "ready to translate", "listo para traducir"),
    ("state_translating", "translating", "traduciendo"),
    ("state_paused", "paused", "en pausa"),
    ("state_translated", "translated, making the files", "traducido, preparando los archivos"),
    ("state_generating", "making the files", "preparando los archivos"),
    ("state_completed", "translated", "traducido"),
    ("state_error", "failed", "con error"),
    ("state_pending", "waiting", "en espera"),
    ("state_retrying", "will be retried", "se reintentará"),
    ("state_delivered", "delivered", "entregada"),
    ("state_failed", "failed", "fallida"),
    ("state_draft", "draft", "borrador"),
    ("state_published", "published", "publicada"),
    ("state_archived", "archived", "archivada"),
    ("state_approved", "approved", "aprobado"),
    ("state_spam", "spam", "spam"),
    ("state_deleted", "deleted", "eliminado"),
    // The settings' sections and the password change.
    ("section_profile", "Profile and password", "Perfil y contraseña"),
    ("section_usage", "Usage and plan", "Uso y plan"),
    ("section_data", "Data and account", "Datos y cuenta"),
    ("saved", "Saved.", "Guardado."),
    ("password_saved", "Your password is changed. Every other session of the account is signed out; this one stays signed in.", "Tu contraseña ha cambiado. Las demás sesiones de la cuenta se han cerrado; esta sigue abierta."),
    ("verification_sent", "A verification link is on its way to your email.", "Va de camino a tu correo un enlace de verificación."),
    ("wrong_password", "The current password is not right: nothing was changed.", "La contraseña actual no es correcta: no se ha cambiado nada."),
    ("change_password", "Change the password", "Cambiar la contraseña"),
    ("change_password_hint", "Every other place where you are signed in is signed out; API keys keep working.", "Se cierra la sesión en todos los demás sitios donde la tengas abierta; las claves de API siguen funcionando."),
    ("current_password", "Current password", "Contraseña actual"),
    ("new_password_field", "New password", "Contraseña nueva"),
    ("plan", "Plan", "Plan"),
    // The reader.
    ("contents", "Chapters", "Capítulos"),
    ("back_to_book", "Back to the book", "Volver al libro"),
    ("view", "View", "Vista"),
    ("view_both", "Side by side", "Lado a lado"),
    ("view_translation", "Translation only", "Solo la traducción"),
    ("previous_page", "Previous page", "Página anterior"),
    ("next_page", "Next page", "Página siguiente"),
    ("previous_chapter", "Previous chapter", "Capítulo anterior"),
    ("next_chapter", "Next chapter", "Capítulo siguiente"),
    ("page", "Page", "Página"),
    ("pages_top", "Chapter pages", "Páginas del capítulo"),
    ("pages_bottom", "Chapter pages, at the end", "Páginas del capítulo, al final"),
    ("original", "Original", "Original"),
    ("not_translated_yet", "not translated yet", "aún sin traducir"),
    // The owner's reader as the editor (issue 38).
    ("edit", "Edit", "Editar"),
    ("edit_passage", "Edit this passage", "Editar este pasaje"),
    ("flagged_mark", "Flagged", "Señalado"),
    ("passages_flagged", "Passages flagged by the checks and still open:", "Pasajes señalados por las comprobaciones y aún pendientes:"),
    ("no_passage_flagged", "No passage is flagged: the checks found nothing left to review.", "Ningún pasaje está señalado: las comprobaciones no dejan nada por revisar."),
    ("next_flagged", "Next flagged passage", "Siguiente pasaje señalado"),
    ("note_no_flagged", "No flagged passage is left to review.", "No queda ningún pasaje señalado por revisar."),
    ("note_wrapped", "That was the last one: back to the book's first flagged passage.", "Era el último: de vuelta al primer pasaje señalado del libro."),
    ("translation_field", "Translation of this passage", "Traducción de este pasaje"),
    ("marks_to_keep", "Marks to keep, in this order:", "Marcas que hay que conservar, en este orden:"),
    ("save_shortcut", "Ctrl+Enter (⌘+Enter on a Mac) saves.", "Ctrl+Intro (⌘+Intro en un Mac) guarda."),
    ("undo", "Undo the last change", "Deshacer el último cambio"),
    ("reset_to_model", "Back to the model's text", "Volver al texto del modelo"),
    ("close_editor", "Close the editor", "Cerrar el editor"),
    ("origin_model", "Text from the model", "Texto del modelo"),
    ("origin_memory", "From your translation memory: translated and accepted before", "De tu memoria de traducción: traducido y aceptado antes"),
    ("origin_edited_by_you", "Your edit", "Tu corrección"),
    ("origin_edited", "Edited", "Corregido"),
    ("origin_kept", "The model's text, kept as it is", "El texto del modelo, conservado tal cual"),
    ("origin_retranslated", "Re-translated, accepted: model", "Retraducido y aceptado: modelo"),
    ("instruction", "instruction", "instrucción"),
    ("keep_as_is", "Keep as it is", "Dejarlo tal cual"),
    ("done_kept", "Kept as it is: its flags are cleared.", "Conservado tal cual: sus avisos se han quitado."),
    ("retranslate_instruction", "Instruction for a new translation (optional)", "Instrucción para una traducción nueva (opcional)"),
    ("retranslate_hint", "Such as \"more formal\" or \"keep the pun\". The model translates the passage again with it; you see the result before anything changes.", "Por ejemplo \"más formal\" o \"conserva el juego de palabras\". El modelo vuelve a traducir el pasaje con ella; ves el resultado antes de que cambie nada."),
    ("retranslate_passage", "Translate this passage again", "Traducir de nuevo este pasaje"),
    ("retranslate_chapter", "Translate this chapter again", "Traducir de nuevo este capítulo"),
    ("retranslate_chapter_hint", "Your own passages are left alone. You see the result before anything changes; its words count against the month's quota.", "Tus propios pasajes no se tocan. Ves el resultado antes de que cambie nada; sus palabras cuentan en la cuota del mes."),
    ("proposal_title", "A new translation to review", "Una traducción nueva por revisar"),
    ("proposal_pending", "It is being translated.", "Se está traduciendo."),
    ("look_again", "Look again", "Volver a mirar"),
    ("proposal_closed", "This proposal was accepted or discarded.", "Esta propuesta ya se aceptó o se descartó."),
    ("proposal_now", "Now", "Ahora"),
    ("proposal_new", "Proposed", "Propuesta"),
    ("passage", "Passage", "Pasaje"),
    ("accept", "Accept", "Aceptar"),
    ("discard", "Discard", "Descartar"),
    ("accept_hint", "Accept puts the proposed texts in the book, but those the checks flagged; each stays undoable from its editor.", "Aceptar pone en el libro los textos propuestos, salvo los que las comprobaciones señalaron; cada uno se puede deshacer desde su editor."),
    ("back_to_reader", "Back to the reader", "Volver al lector"),
    ("pass_translate", "first translation", "primera traducción"),
    ("pass_review", "consistency review", "revisión de coherencia"),
    ("pass_polish", "polish", "pulido"),
    ("done_saved", "Saved: the book's files are made again with it on the next download.", "Guardado: los archivos del libro se rehacen con el cambio en la próxima descarga."),
    ("done_undone", "The last change is undone.", "Se ha deshecho el último cambio."),
    ("done_reset", "The model's text is back; undo brings yours back.", "Ha vuelto el texto del modelo; deshacer recupera el tuyo."),
    ("stale", "Not saved: this passage was changed elsewhere since you opened it.", "No se ha guardado: este pasaje se cambió en otro sitio desde que lo abriste."),
    ("stale_now", "Its text now:", "Su texto ahora:"),
    ("stale_kept", "Your text is still in the field: save again to replace this one with it.", "Tu texto sigue en el campo: guarda de nuevo para sustituir este por el tuyo."),
    ("nothing_to_undo", "There is no change to undo.", "No hay ningún cambio que deshacer."),
    ("marks_refused", "Not saved: the marks must be the original's.", "No se ha guardado: las marcas deben ser las del original."),
    ("empty_text", "Not saved: a passage's translation cannot be empty.", "No se ha guardado: la traducción de un pasaje no puede quedar vacía."),
    ("not_saved", "Not saved:", "No se ha guardado:"),
    ("flag_kept", "The text shown is the best one that passed the checks, or the original.", "El texto que se ve es el mejor que pasó las comprobaciones, o el original."),
    ("pflag_missing", "the model did not return this passage.", "el modelo no devolvió este pasaje."),
    ("pflag_brokenMarks", "the model broke the passage's formatting marks.", "el modelo rompió las marcas de formato del pasaje."),
    ("pflag_untranslated", "the model left it untranslated.", "el modelo lo dejó sin traducir."),
    ("pflag_wrongLanguage", "the model wrote it in another language.", "el modelo lo escribió en otro idioma."),
    ("pflag_length", "the model's text was far longer or shorter than a translation can be.", "el texto del modelo era mucho más largo o más corto de lo que puede ser una traducción."),
    ("pflag_refusal", "the model refused, or commented instead of translating.", "el modelo se negó, o comentó en vez de traducir."),
    ("pflag_merged", "the model ran it together with the next passage.", "el modelo lo juntó con el pasaje siguiente."),
    ("pflag_repeated", "the model said the same thing more than once.", "el modelo dijo lo mismo más de una vez."),
    ("pflag_truncated", "the model's text was cut off.", "el texto del modelo quedó cortado."),
    ("pflag_duplicate", "the model gave it the same text as another passage.", "el modelo le dio el mismo texto que a otro pasaje."),
    ("pflag_numbers", "the model's numbers are not the original's.", "los números del modelo no son los del original."),
    ("pflag_names", "the model's names are not the original's.", "los nombres del modelo no son los del original."),
    // The review desk, and a fix that can succeed (issue 48 items 2 and 3).
    ("review_title", "Passages to review", "Pasajes por revisar"),
    ("review_link", "Review the passages that need a look", "Revisar los pasajes que necesitan una mirada"),
    ("review_them", "Review them", "Revisarlos"),
    ("review_back_to_book", "Back to the book", "Volver al libro"),
    ("review_intro", "Every passage the checks flagged, of confidence under {bar} of 100, changed by the review or the polish, or with a new translation waiting, the lowest confidence first. Keep what reads well, edit or translate again what does not.", "Cada pasaje que las comprobaciones señalaron, de confianza por debajo de {bar} sobre 100, cambiado por la revisión o el pulido, o con una traducción nueva pendiente, primero los de menor confianza. Conserva lo que se lee bien; corrige o vuelve a traducir lo que no."),
    ("review_filters", "Which passages", "Qué pasajes"),
    ("review_show", "Why", "Por qué"),
    ("review_every_reason", "Every reason", "Cualquier motivo"),
    ("review_every_chapter", "Every chapter", "Todos los capítulos"),
    ("review_status_open", "To review", "Por revisar"),
    ("review_status_done", "Reviewed", "Revisados"),
    ("review_status_all", "All", "Todos"),
    ("review_apply_filters", "Show", "Mostrar"),
    ("review_total", "Passages: {n}", "Pasajes: {n}"),
    ("review_empty", "No passage here needs a look.", "Ningún pasaje de aquí necesita una mirada."),
    ("review_pages_top", "Pages of the review", "Páginas de la revisión"),
    ("review_pages_bottom", "Pages of the review, at the end", "Páginas de la revisión, al final"),
    ("review_keep_selected", "Keep the ticked passages as they are", "Dejar tal cual los pasajes marcados"),
    ("review_accept_selected", "Accept the ticked passages' new translations", "Aceptar las traducciones nuevas de los pasajes marcados"),
    ("review_bulk_hint", "Tick passages to keep or accept several at once. A new translation that failed a check is accepted only on its own.", "Marca pasajes para conservar o aceptar varios a la vez. Una traducción nueva que no pasó una comprobación solo se acepta por separado."),
    ("review_edit", "Edit in place", "Corregir en su sitio"),
    ("review_accepted_mark", "New translation accepted", "Traducción nueva aceptada"),
    ("review_answer_failed", "Every answer failed a check; this is the last one:", "Todas las respuestas fallaron una comprobación; esta es la última:"),
    ("review_accept_knowingly_hint", "Accept it anyway if it reads well: the passage then says what it failed.", "Acéptala de todos modos si se lee bien: el pasaje dirá entonces qué falló."),
    ("review_no_answer", "The model gave no answer the book can hold: the proposal is the original. Discard it, or translate again.", "El modelo no dio ninguna respuesta que el libro pueda contener: la propuesta es el original. Descártala, o vuelve a traducir."),
    ("review_said_kept", "Passages kept as they are: {n}.", "Pasajes conservados tal cual: {n}."),
    ("review_said_accepted", "New translations accepted: {n}.", "Traducciones nuevas aceptadas: {n}."),
    ("review_said_accepted_with", "Accepted knowingly: the passage holds the model's answer and says which check it failed.", "Aceptada a sabiendas: el pasaje tiene la respuesta del modelo y dice qué comprobación no pasó."),
    ("review_said_discarded", "Discarded: the passage is as it was.", "Descartada: el pasaje sigue como estaba."),
    ("review_said_none_selected", "Nothing was changed: tick at least one passage.", "No se ha cambiado nada: marca al menos un pasaje."),
    ("review_said_stale", "Nothing was changed: the passage was changed elsewhere since this page was shown. Here it is as it is now.", "No se ha cambiado nada: el pasaje se cambió en otro sitio después de mostrarse esta página. Aquí está como es ahora."),
    ("review_said_not_ready", "Nothing was changed: the new translation is no longer there to accept.", "No se ha cambiado nada: la traducción nueva ya no está para aceptarla."),
    ("review_said_not_kept", "Nothing was changed: the passage needs no look.", "No se ha cambiado nada: el pasaje no necesita ninguna mirada."),
    ("review_said_limited", "Stopped at your plan's limit of changes after {n}; {left} left as they were. Come back in a minute for the rest.", "Detenido en el límite de cambios de tu plan tras {n}; {left} siguen como estaban. Vuelve dentro de un minuto para el resto."),
    ("review_said_left", "Left as they were: {left} (changed since, without a new translation ready, or with one that failed a check).", "Sin cambiar: {left} (cambiados después, sin traducción nueva lista, o con una que no pasó una comprobación)."),
    ("confidence", "Confidence", "Confianza"),
    ("confidence_low", "low", "baja"),
    ("look_flagged", "Flagged", "Señalado"),
    ("look_lowConfidence", "Low confidence", "Confianza baja"),
    ("look_changed", "Changed by a later pass", "Cambiado por una pasada posterior"),
    ("look_proposal", "New translation waiting", "Traducción nueva pendiente"),
    ("accepted_with", "Accepted with", "Aceptado con"),
    ("accept_anyway", "Accept it anyway", "Aceptarla de todos modos"),
    ("done_accepted", "Accepted: the passage holds the new translation; undo brings the old one back.", "Aceptada: el pasaje tiene la traducción nueva; deshacer recupera la anterior."),
    ("done_accepted_with", "Accepted knowingly: the passage holds the model's answer, which failed a check (said below); undo brings the old one back.", "Aceptada a sabiendas: el pasaje tiene la respuesta del modelo, que no pasó una comprobación (se dice abajo); deshacer recupera la anterior."),
    ("done_discarded", "Discarded: the passage is as it was.", "Descartada: el pasaje sigue como estaba."),
    // One form and the other, for `plural`.
    ("proposal_said_accepted", "Accepted: {n} passage now holds the new translation.|Accepted: {n} passages now hold the new translation.", "Aceptada: {n} pasaje tiene ya la traducción nueva.|Aceptada: {n} pasajes tienen ya la traducción nueva."),
    ("proposal_said_discarded", "Discarded: the book is as it was.", "Descartada: el libro sigue como estaba."),
    ("proposal_said_none", "Nothing was accepted: every proposed text the checks passed is in the book already, and those that failed a check are accepted only one by one, with \"Accept it anyway\".", "No se ha aceptado nada: todos los textos propuestos que pasaron las comprobaciones ya están en el libro, y los que no pasaron una solo se aceptan de uno en uno, con \"Aceptarla de todos modos\"."),
    ("proposal_failed_check", "Every answer failed a check; this is the last one, which", "Todas las respuestas fallaron una comprobación; esta es la última, que"),
    ("proposal_no_answer", "The model gave no answer the book can hold: this is the original.", "El modelo no dio ninguna respuesta que el libro pueda contener: esto es el original."),
    ("check_missing", "the answer left the passage out", "la respuesta omitió el pasaje"),
    ("check_brokenMarks", "the answer broke the formatting marks", "la respuesta rompió las marcas de formato"),
    ("check_untranslated", "the answer was not translated", "la respuesta no estaba traducida"),
    ("check_wrongLanguage", "the answer was in another language", "la respuesta estaba en otro idioma"),
    ("check_length", "the answer was far longer or shorter than a translation can be", "la respuesta era mucho más larga o más corta de lo que puede ser una traducción"),
    ("check_refusal", "the model refused, or commented instead of translating", "el modelo se negó, o comentó en vez de traducir"),
    ("check_merged", "the answer ran into the next passage", "la respuesta se juntó con el pasaje siguiente"),
    ("check_repeated", "the answer said the same thing more than once", "la respuesta dijo lo mismo más de una vez"),
    ("check_truncated", "the answer was cut off", "la respuesta quedó cortada"),
    ("check_duplicate", "the answer was the same as another passage's", "la respuesta era igual que la de otro pasaje"),
    ("check_numbers", "the answer's numbers are not the original's", "los números de la respuesta no son los del original"),
    ("check_names", "the answer's names are not the original's", "los nombres de la respuesta no son los del original"),
    // A book's page.
    ("your_translation", "Your translation", "Tu traducción"),
    ("read_so_far", "Read what is translated", "Leer lo traducido"),
    ("continue_reading", "Continue reading", "Seguir leyendo"),
    ("read_from_start", "Read from the start, beside the original", "Leer desde el principio, junto al original"),
    ("partial_downloads", "The files hold the chapters translated so far; the others keep the original text.", "Los archivos tienen los capítulos traducidos hasta ahora; los demás conservan el texto original."),
    // Errors as pages, the way in, the quota before Start, pause and stop (issue 36).
    ("not_found_text", "There is no page at this address, or it is not yours to see.", "No hay ninguna página en esta dirección, o no es tuya."),
    ("share_gone", "This link does not open a book", "Este enlace no abre ningún libro"),
    ("share_gone_text", "The link was revoked by its owner, has expired, or was copied incompletely. Ask whoever sent it for a new one.", "Su dueño revocó el enlace, caducó, o se copió incompleto. Pide uno nuevo a quien te lo envió."),
    ("too_many_requests", "Too many requests", "Demasiadas peticiones"),
    ("come_back_in", "Come back in {minutes} min.", "Vuelve dentro de {minutes} min."),
    ("not_allowed", "Not allowed", "No permitido"),
    ("home", "Home", "Inicio"),
    ("pausing", "Pausing: the chapters in progress finish first.", "Pausando: primero terminan los capítulos en curso."),
    ("paused_note", "Paused. Resume to translate the rest, or stop.", "En pausa. Reanuda para traducir el resto, o detén la traducción."),
    ("stop_title", "Stop the translation?", "¿Detener la traducción?"),
    ("stop_kept", "Chapters already translated are kept, with their downloads, and are not charged again if you translate the book later with the same choices. Chapters not translated yet go back to this month's word quota. A chapter in progress finishes and is kept.", "Los capítulos ya traducidos se conservan, con sus descargas, y no se vuelven a cobrar si traduces el libro más tarde con las mismas opciones. Las palabras de los capítulos sin traducir vuelven a la cuota del mes. Un capítulo en curso termina y se conserva."),
    ("chapters_kept", "Chapters translated so far", "Capítulos traducidos hasta ahora"),
    ("stop_yes", "Yes, stop", "Sí, detener"),
    ("stop_no", "Keep translating", "Seguir traduciendo"),
    ("over_quota", "Your plan cannot translate this book this month", "Tu plan no puede traducir este libro este mes"),
    ("over_quota_words", "Words to translate", "Palabras por traducir"),
    ("over_quota_left", "Words left this month", "Palabras que quedan este mes"),
    ("quota_plan", "The {plan} plan covers it: ask the service's administrator to change your plan.", "El plan {plan} lo cubre: pide al administrador del servicio que cambie tu plan."),
    ("quota_next_month", "Your plan covers it from {date}, when the month's quota starts again.", "Tu plan lo cubre a partir del {date}, cuando empieza de nuevo la cuota del mes."),
    ("quota_no_plan", "No plan covers a book this long in one month: split the file into parts.", "Ningún plan cubre un libro tan largo en un mes: divide el archivo en partes."),
    ("stopped_note", "Stopped. The chapters translated so far are kept, with their downloads; translate the book again to do the rest (they are not charged again).", "Detenida. Los capítulos traducidos hasta ahora se conservan, con sus descargas; vuelve a traducir el libro para hacer el resto (no se cobran de nuevo)."),
    ("run_cost", "What the last run cost", "Lo que costó la última traducción"),
    ("home_heading", "Whole books, translated", "Libros enteros, traducidos"),
    ("home_intro", "Upload an EPUB, PDF, DOCX, HTML, TXT, Markdown or FB2 book; every chapter is translated in three passes (translate, consistency review, polish) with your glossary enforced throughout, and comes back as EPUB or PDF (a Markdown book as Markdown too).", "Sube un libro en EPUB, PDF, DOCX, HTML, TXT, Markdown o FB2; cada capítulo se traduce en tres pasadas (traducción, revisión de coherencia, pulido) respetando tu glosario de principio a fin, y vuelve como EPUB o PDF (un libro en Markdown, también como Markdown)."),
    ("home_description", "Book translation in three passes with your glossary enforced, from EPUB, PDF, DOCX, HTML, TXT, Markdown or FB2 to EPUB or PDF.", "Traducción de libros en tres pasadas respetando tu glosario, de EPUB, PDF, DOCX, HTML, TXT, Markdown o FB2 a EPUB o PDF."),
    ("from_community", "From the community", "De la comunidad"),
    ("all_posts", "All posts", "Todas las publicaciones"),
    ("community_description", "Posts from booktr's readers and translators.", "Publicaciones de los lectores y traductores de booktr."),
    ("categories", "Categories", "Categorías"),
    ("no_posts_here", "No posts here yet.", "Aún no hay publicaciones aquí."),
    ("newer_posts", "Newer posts", "Publicaciones más recientes"),
    ("older_posts", "Older posts", "Publicaciones anteriores"),
    ("page_of", "Page {page} of {pages}", "Página {page} de {pages}"),
    ("footer", "booktr — books translated whole, consistently.", "booktr — libros traducidos enteros, con coherencia."),
    // A book's term list (issue 51).
    ("term_list", "Term list", "Lista de términos"),
    ("terms_intro", "The names and terms every chapter keeps to, each with its rendering. The chapters translated after a change use the list as it is then; those already translated keep their text (rename a term in them from the reader's editor).", "Los nombres y términos que respetan todos los capítulos, cada uno con su traducción. Los capítulos que se traducen después de un cambio usan la lista tal como está entonces; los ya traducidos conservan su texto (cambia un término en ellos desde el editor del lector)."),
    ("terms_paused_title", "The translation is waiting for you", "La traducción te espera"),
    ("terms_paused_text", "It stopped with its term list ready, before the first chapter. Check the renderings below, change what you want and save, then continue: the chapters are translated with the list as it is then.", "Se detuvo con la lista de términos lista, antes del primer capítulo. Revisa las traducciones de abajo, cambia lo que quieras y guarda, y luego continúa: los capítulos se traducen con la lista tal como esté entonces."),
    ("terms_continue", "Continue the translation", "Continuar la traducción"),
    ("terms_saved", "Saved: the chapters translated from now on use the list.", "Guardado: los capítulos que se traduzcan a partir de ahora usan la lista."),
    ("term_new_both", "a new term needs both the term and its rendering.", "un término nuevo necesita el término y su traducción."),
    ("terms_not_ready", "The list is made when a translation starts, before its first chapter, and can be changed once it is made. Tick \"Stop when the term list is ready\" when you start, to check it before any chapter is translated.", "La lista se hace cuando empieza una traducción, antes de su primer capítulo, y se puede cambiar una vez hecha. Marca \"Parar cuando la lista de términos esté lista\" al empezar, para revisarla antes de que se traduzca ningún capítulo."),
    ("terms_of_book", "The book's names and terms", "Los nombres y términos del libro"),
    ("terms_table_hint", "Change a rendering, or tick Remove: a removed term (or one whose rendering is emptied) is translated freely. Type the term itself to keep it unchanged.", "Cambia una traducción, o marca Quitar: un término quitado (o cuya traducción se vacía) se traduce libremente. Escribe el propio término para dejarlo sin traducir."),
    ("terms_none", "The list has no terms yet: add one below.", "La lista aún no tiene términos: añade uno abajo."),
    ("term_rendering", "Rendering", "Traducción"),
    ("rendering_of", "Rendering of", "Traducción de"),
    ("term_origin", "From", "Origen"),
    ("term_origin_model", "Found by the model", "Hallado por el modelo"),
    ("term_origin_owner", "Set by you", "Fijado por ti"),
    ("term_origin_glossary", "Your glossary", "Tu glosario"),
    ("term_occurrences", "Times in the book", "Veces en el libro"),
    ("term_add", "Add a term", "Añadir un término"),
    ("term_add_hint", "The term as the book writes it, and how every chapter is to render it. A term already listed takes this rendering.", "El término tal como lo escribe el libro, y cómo debe traducirlo cada capítulo. Un término que ya está en la lista toma esta traducción."),
    ("terms_save", "Save the list", "Guardar la lista"),
    ("terms_from_glossary", "From the glossary", "Del glosario"),
    ("terms_glossary_hint", "The glossary the translation was started with fixes these: change them in the glossary, then translate the book again.", "El glosario con el que empezó la traducción fija estos: cámbialos en el glosario y vuelve a traducir el libro."),
    ("open_glossary", "Open the glossary", "Abrir el glosario"),
    ("terms_link", "The book's term list", "La lista de términos del libro"),
    ("count_terms", "1 name or term|{n} names and terms", "1 nombre o término|{n} nombres y términos"),
    ("terms_paused_note", "Paused with the term list ready, before the first chapter: check it, then continue.", "En pausa con la lista de términos lista, antes del primer capítulo: revísala y luego continúa."),
    ("terms_check", "Check the term list", "Revisar la lista de términos"),
    // Renaming a term in the whole book from the editor (issue 48).
    ("rename_offer", "This edit renames a term of the book:", "Esta corrección cambia un término del libro:"),
    ("rename_in_original", "in the original", "en el original"),
    ("rename_offer_hint", "You see every passage it would change, before and after, and choose, before anything changes.", "Ves cada pasaje que cambiaría, antes y después, y eliges, antes de que cambie nada."),
    ("rename_see", "Rename it in the whole book", "Cambiarlo en todo el libro"),
    ("rename_title", "Rename a term in the whole book", "Cambiar un término en todo el libro"),
    ("rename_back", "Back to the passage", "Volver al pasaje"),
    ("rename_intro", "Each passage below holds the old rendering. Tick those to change: applying also puts the term in the book's glossary, so later translations of the book use it.", "Cada pasaje de abajo tiene la traducción anterior. Marca los que quieras cambiar: al aplicarlo, el término entra también en el glosario del libro, y las traducciones futuras del libro lo usan."),
    ("rename_model_passages", "Passages with the model's text", "Pasajes con el texto del modelo"),
    ("rename_edited_passages", "Your own edits", "Tus propias correcciones"),
    ("rename_edited_hint", "These hold your own text: they change only if you tick them.", "Estos tienen tu propio texto: solo cambian si los marcas."),
    ("rename_change", "Change", "Cambiar"),
    ("rename_where", "Where", "Dónde"),
    ("rename_after", "After", "Después"),
    ("rename_apply", "Rename in the ticked passages", "Cambiar en los pasajes marcados"),
    ("rename_none", "No other passage holds the old rendering.", "Ningún otro pasaje tiene la traducción anterior."),
    ("rename_none_here", "No passage from here on holds the old rendering.", "Ningún pasaje de aquí en adelante tiene la traducción anterior."),
    ("rename_more", "The book goes on: the next passages that hold it are on the next page.", "El libro sigue: los siguientes pasajes que la tienen están en la página siguiente."),
    ("rename_next", "Next passages", "Pasajes siguientes"),
    ("rename_applied", "Renamed in {n} passages.", "Cambiado en {n} pasajes."),
    ("rename_applied_one", "Renamed in 1 passage.", "Cambiado en 1 pasaje."),
    ("rename_nothing", "No passage took the change: nothing was written.", "Ningún pasaje admitió el cambio: no se ha escrito nada."),
    ("rename_glossary", "The term is in the glossary", "El término está en el glosario"),
    ("rename_glossary_new", "made for this book", "creado para este libro"),
    ("rename_glossary_later", "later translations of the book use it.", "las traducciones futuras del libro lo usan."),
    ("rename_skipped", "Left as they were:", "Sin cambiar:"),
    ("skip_changed", "changed since the preview, so left as it is now.", "cambió después de la vista previa, así que se queda como está."),
    ("skip_not_found", "not found.", "no se encontró."),
    ("skip_not_held", "it no longer holds the old rendering.", "ya no tiene la traducción anterior."),
    ("skip_refused", "its text with the new rendering could not be saved:", "su texto con la traducción nueva no se pudo guardar:"),
    ("rename_tick_one", "Nothing was changed: tick at least one passage.", "No se ha cambiado nada: marca al menos un pasaje."),
    // Words and feedback (issue 48 item 5).
    ("language_not_known", "\u{201c}{typed}\u{201d} is not a language we know. Type its name, such as French, German, Japanese or Portuguese (Brazil), or its code, such as fr, de, ja or pt-BR.", "\u{ab}{typed}\u{bb} no es un idioma que conozcamos. Escribe su nombre, como francés, alemán, japonés o portugués (Brasil), o su código, como fr, de, ja o pt-BR."),
    ("origin_source_kept", "The original text, kept: no translation of it passed the checks", "El texto original, conservado: ninguna traducción pasó las comprobaciones"),
    // The owner kept a flagged passage that held its source: what is kept is the original.
    ("origin_source_kept_as_is", "The original text, kept as it is", "El texto original, conservado tal cual"),
    ("run_spent", "Spent so far on this run", "Gastado hasta ahora en esta traducción"),
    ("spent_nothing_yet", "nothing yet", "nada todavía"),
    ("signed_out", "You are signed out.", "Has cerrado la sesión."),
    ("continue_page", "page {page}", "página {page}"),
    ("edit_side_by_side", "Side by side, every passage has an Edit link; here, those flagged.", "Lado a lado, cada pasaje tiene un enlace Editar; aquí, los señalados."),
    ("error_summary", "There is a problem", "Hay un problema"),
    ("wrong_credentials", "The email or the password is not right.", "El correo o la contraseña no son correctos."),
    ("err_invalid_title", "That could not be done", "No se ha podido hacer"),
    ("err_invalid", "That could not be done as asked.", "No se ha podido hacer tal como se pidió."),
    ("err_check_form", "Go back, check what the form holds and try again.", "Vuelve atrás, revisa lo que tiene el formulario e inténtalo de nuevo."),
    ("err_quota", "Your plan's monthly quota does not cover this.", "La cuota mensual de tu plan no cubre esto."),
    ("err_invalid_key", "The provider did not accept this key: check that it was copied whole, then save it again.", "El proveedor no ha aceptado esta clave: comprueba que se copió entera y vuelve a guardarla."),
    ("err_email_taken", "An account with this email already exists: sign in, or ask for a new password if you have forgotten it.", "Ya existe una cuenta con este correo: inicia sesión, o pide una contraseña nueva si la has olvidado."),
    ("err_conflict_title", "Changed meanwhile", "Cambió mientras tanto"),
    ("err_conflict", "This changed elsewhere meanwhile (in another tab, or by someone with the same account). Reload the page to see it as it is now, and try again.", "Esto cambió mientras tanto en otro sitio (en otra pestaña, o alguien con la misma cuenta). Recarga la página para verlo como está ahora e inténtalo de nuevo."),
    ("err_render", "The book's file could not be made.", "No se ha podido hacer el archivo del libro."),
    ("err_session", "Your session has ended: sign in again.", "Tu sesión ha terminado: vuelve a iniciarla."),
    ("err_not_yours", "This is not open to your account.", "Esto no está abierto a tu cuenta."),
    ("err_method", "This page does not take that kind of request: go back and use the page's own buttons.", "Esta página no admite ese tipo de petición: vuelve atrás y usa los botones de la propia página."),
    ("err_busy_title", "Busy for a moment", "Ocupado un momento"),
    ("err_busy", "The service is busy for a moment: try again in a few seconds.", "El servicio está ocupado un momento: inténtalo de nuevo dentro de unos segundos."),
    ("err_internal_title", "Something went wrong", "Algo ha fallado"),
    ("err_internal", "Something went wrong on our side. It has been noted; try again later.", "Algo ha fallado por nuestra parte. Ha quedado anotado; inténtalo de nuevo más tarde."),
    ("err_max_cost", "The spending cap is a sum of US dollars, such as 2.50.", "El límite de gasto es una cantidad en dólares, como 2.50."),
    ("err_share_days", "The link's expiry is a number of days, such as 30.", "La caducidad del enlace es un número de días, como 30."),
    ("err_key_days", "A key's expiry is a number of days, from 1 to 3650.", "La caducidad de una clave es un número de días, de 1 a 3650."),
    // A book's XLIFF for translation tools (`xliff`), on the book's page and its import's report.
    ("xliff_title", "Translation tools (XLIFF)", "Herramientas de traducción (XLIFF)"),
    ("xliff_hint", "Download the translation as XLIFF 1.2 for a translation tool (OmegaT, Trados, memoQ, Weblate), then upload the file it saves: each passage the translator changed becomes your edit, checked as any edit is. A passage changed here since the download is left as it is.", "Descarga la traducción en XLIFF 1.2 para una herramienta de traducción (OmegaT, Trados, memoQ, Weblate) y sube después el archivo que guarde: cada pasaje que cambió el traductor pasa a ser tu edición, comprobada como cualquier edición. Un pasaje cambiado aquí desde la descarga se deja como está."),
    ("xliff_download", "Download the whole book as XLIFF", "Descargar el libro entero en XLIFF"),
    ("xliff_download_chapter", "Download this chapter as XLIFF", "Descargar este capítulo en XLIFF"),
    ("xliff_file", "XLIFF file from a translation tool", "Archivo XLIFF de una herramienta de traducción"),
    ("xliff_upload_hint", "An XLIFF 1.2 file downloaded from this book, up to 16 MB. One upload changes at most 500 passages: upload it again for the rest.", "Un archivo XLIFF 1.2 descargado de este libro, de hasta 16 MB. Una subida cambia como mucho 500 pasajes: súbelo otra vez para el resto."),
    ("xliff_upload", "Upload and apply the changes", "Subir y aplicar los cambios"),
    ("xliff_missing", "Choose an XLIFF file to upload.", "Elige un archivo XLIFF para subir."),
    ("xliff_too_large", "The XLIFF file is larger than {mb} MB.", "El archivo XLIFF ocupa más de {mb} MB."),
    ("xliff_report_title", "XLIFF import", "Importación XLIFF"),
    ("xliff_report_changed", "Passages changed: {n}. The book's files are made again, with the changes, on the next download.", "Pasajes cambiados: {n}. Los archivos del libro se vuelven a generar, con los cambios, en la próxima descarga."),
    ("xliff_report_nothing", "No passage changed.", "No ha cambiado ningún pasaje."),
    ("xliff_changed", "Changed", "Cambiado"),
    ("xliff_unchanged", "Unchanged", "Sin cambios"),
    ("xliff_conflict", "Conflict", "Conflicto"),
    ("xliff_refused", "Refused", "Rechazado"),
    ("xliff_unknown", "Unknown", "Desconocido"),
    ("xliff_conflict_hint", "A conflict is a passage changed here since the download (an edit, an undo, a new translation): it was left as it is. Download the file again to work on it as it is now.", "Un conflicto es un pasaje cambiado aquí desde la descarga (una edición, un deshacer, una nueva traducción): se dejó como está. Vuelve a descargar el archivo para trabajar sobre él tal como está ahora."),
    ("xliff_units", "Units that changed a passage or were not applied", "Unidades que cambiaron un pasaje o no se aplicaron"),
    ("xliff_unit", "Unit", "Unidad"),
    ("xliff_outcome", "Outcome", "Resultado"),
    ("xliff_why", "Why", "Motivo"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_message_has_both_languages_and_keys_are_unique() {
        let mut keys: Vec<&str> = MESSAGES.iter().map(|(k, _, _)| *k).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), MESSAGES.len(), "a key appears twice");
        for (key, en, es) in MESSAGES {
            assert!(!en.is_empty() && !es.is_empty(), "{key} lacks a language");
        }
    }

    #[test]
    fn every_flag_kind_and_pass_is_said_in_words() {
        for problem in booktr_translate::checks::Problem::ALL {
            let key = format!("pflag_{}", problem.name());
            assert!(Lang::En.find(&key).is_some(), "{key}");
            let key = format!("check_{}", problem.name());
            assert!(Lang::En.find(&key).is_some(), "{key}");
        }
        for pass in ["translate", "review", "polish"] {
            assert!(Lang::Es.find(&format!("pass_{pass}")).is_some(), "{pass}");
        }
    }

    #[test]
    fn every_count_has_its_singular_and_plural_in_both_languages() {
        let counts = MESSAGES
            .iter()
            .filter(|(key, _, _)| key.starts_with("count_") || key.starts_with("flag_"))
            .filter(|(key, _, _)| *key != "flag_kept");
        for (key, en, es) in counts {
            for forms in [en, es] {
                let parts: Vec<&str> = forms.split('|').collect();
                assert_eq!(parts.len(), 2, "{key}: one|other");
                assert!(
                    parts
                        .iter()
                        .all(|p| p.contains("{n}") || p.starts_with("1 ")),
                    "{key}"
                );
            }
        }
        for problem in booktr_translate::checks::Problem::ALL {
            let key = format!("flag_{}", problem.name());
            assert!(
                Lang::Es.find(&key).is_some_and(|m| m.contains('|')),
                "{key}"
            );
        }
    }

    #[test]
    fn the_cookie_wins_then_the_heaviest_accept_language_then_english() {
        let headers = |pairs: &[(&'static str, &'static str)]| {
            let mut h = HeaderMap::new();
            for (name, value) in pairs {
                h.append(*name, value.parse().unwrap());
            }
            h
        };
        assert_eq!(Lang::of(&headers(&[])), Lang::En);
        assert_eq!(
            Lang::of(&headers(&[(
                "accept-language",
                "fr-FR, es;q=0.8, en;q=0.5"
            )])),
            Lang::Es
        );
        assert_eq!(
            Lang::of(&headers(&[
                ("accept-language", "es-MX"),
                ("cookie", "a=b; lang=en")
            ])),
            Lang::En
        );
        assert_eq!(
            Lang::of(&headers(&[("accept-language", "de, fr")])),
            Lang::En
        );
    }
}
