import GatewayState

/// The calls partners as code makes are the admin client's own.
extension AdminClient: StateAPI {}
