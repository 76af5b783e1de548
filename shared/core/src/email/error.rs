/// Why a text is no [`SenderName`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadSenderName {
    #[error("senderName: 1 to 80 characters")]
    Length,
    #[error("senderName: no line breaks or control characters")]
    ControlCharacter,
}
