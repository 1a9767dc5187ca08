// The answers of the key routes: one key (with the key itself, once, when it was just made) and
// the list of keys of a kind.
import FlowStore
import JSON

/// `{id, name, role?, key?, createdAt, createdBy?, revokedAt}`: a client key has no role and no
/// maker; the key itself is only in the answer that made it (201, `Location`, `no-store`).
struct KeyAnswer: JSONAnswer {
    private let id: String
    private let name: String
    private let role: String?
    private let key: String?
    private let createdAt: String
    private let createdBy: String?
    private let revokedAt: String?
    private let location: String

    init(client record: ClientKeyRecord, key: String? = nil) {
        (id, name, role, createdAt, createdBy, revokedAt) = (record.id, record.name, nil, record.createdAt, nil, record.revokedAt)
        self.key = key
        location = "/v1/client-keys/\(record.id)"
    }

    init(admin record: AdminKeyRecord, key: String? = nil) {
        (id, name, role, createdAt, createdBy, revokedAt) = (record.id, record.name, record.role, record.createdAt, record.createdBy,
                                                             record.revokedAt)
        self.key = key
        location = "/v1/admin-keys/\(record.id)"
    }

    var status: Int { key == nil ? 200 : 201 }
    var headers: [(name: String, value: String)] { key == nil ? [] : [("Location", location), ("Cache-Control", "no-store")] }

    func encode(into writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey("id")
        writer.writeString(id)
        writer.writeKey("name")
        writer.writeString(name)
        if let role {
            writer.writeKey("role")
            writer.writeString(role)
        }
        if let key {
            writer.writeKey("key")
            writer.writeString(key)
        }
        writer.writeKey("createdAt")
        writer.writeString(createdAt)
        if let createdBy {
            writer.writeKey("createdBy")
            writer.writeString(createdBy)
        }
        writer.writeKey("revokedAt")
        writer.writeOptionalString(revokedAt)
        writer.endObject()
    }
}

/// `{clientKeys: [...]}` or `{adminKeys: [...]}`, each key without its secret.
struct KeyListAnswer: JSONAnswer {
    private let field: String
    private let keys: [KeyAnswer]

    init(client records: [ClientKeyRecord]) {
        field = "clientKeys"
        keys = records.map { KeyAnswer(client: $0) }
    }

    init(admin records: [AdminKeyRecord]) {
        field = "adminKeys"
        keys = records.map { KeyAnswer(admin: $0) }
    }

    var capacity: Int { 32 + keys.count * 160 }

    func encode(into writer: inout JSONWriter) {
        writer.beginObject()
        writer.writeKey(field)
        writer.beginArray()
        for key in keys { key.encode(into: &writer) }
        writer.endArray()
        writer.endObject()
    }
}
