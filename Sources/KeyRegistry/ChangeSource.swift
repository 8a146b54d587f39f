/// Who changes a partner's keys: one of the operator's admins, who grant the partner its
/// limits, or one of the partner's own members (the portal), who must stay within them.
public enum ChangeSource: Sendable, Hashable {
    case admin
    case member
}
