/// The admin API's error shape, `{"error": {"code": "NOT_FOUND", "message": "..."}}`.
struct APIErrorBody: Decodable {
    struct Detail: Decodable {
        let code: String
        let message: String
    }

    let error: Detail
}
