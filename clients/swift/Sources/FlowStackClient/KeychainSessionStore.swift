// KeychainSessionStore: the session kept in the Keychain, on Apple platforms only.
#if canImport(Security)
import Foundation
import Security

/// A ``SessionStore`` in the Keychain: one generic-password item per `service`, `account`, server,
/// user and slot, readable after the first unlock. Stores of the same `service` and `account` are
/// one slot scope: two sessions of a user running at once in the app take different slots. Not
/// built (nor tested) on Linux; it only moves bytes in and out of `SecItem` calls.
///
/// ```swift
/// let store = KeychainSessionStore(service: "com.example.app.flowstack")
/// ```
public struct KeychainSessionStore: SessionStore {
    public let service: String
    public let account: String

    public init(service: String, account: String = "session") {
        self.service = service
        self.account = account
    }

    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var status: OSStatus
        public var description: String { "Keychain error \(status)" }
    }

    public var slotScope: String? { "keychain \(service) \(account)" }

    /// One item per server, user and slot: the account is `account`, the server, the user id and,
    /// past slot 1, the slot after a unit separator (the server refuses control characters in user ids).
    private func query(_ key: SessionKey) -> [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
         kSecAttrAccount as String: "\(account) \(key.server) \(key.userId)" + (key.slot == 1 ? "" : "\u{1F}\(key.slot)")]
    }

    /// The one item stores kept before sessions were kept per server and user.
    private var legacyQuery: [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account]
    }

    public func load(_ key: SessionKey) throws -> StoredSession? {
        if let session = try read(query(key)) { return session }
        // A session kept by an older version, under the plain account: used when it is this key's.
        return try read(legacyQuery).flatMap { $0.key == key ? $0 : nil }
    }

    public func save(_ session: StoredSession) throws {
        let data = Data(session.encoded())
        let item = query(session.key)
        let update = SecItemUpdate(item as CFDictionary, [kSecValueData as String: data] as CFDictionary)
        if update != errSecSuccess {
            guard update == errSecItemNotFound else { throw Failure(status: update) }
            var add = item
            add[kSecValueData as String] = data
            add[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlock
            let status = SecItemAdd(add as CFDictionary, nil)
            guard status == errSecSuccess else { throw Failure(status: status) }
        }
        if try read(legacyQuery)?.key == session.key { try delete(legacyQuery) }
    }

    public func remove(_ key: SessionKey) throws {
        try delete(query(key))
        if try read(legacyQuery)?.key == key { try delete(legacyQuery) }
    }

    private func read(_ query: [String: Any]) throws -> StoredSession? {
        var request = query
        request[kSecReturnData as String] = true
        request[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(request as CFDictionary, &result)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess, let data = result as? Data else { throw Failure(status: status) }
        return StoredSession(encoded: Array(data))
    }

    private func delete(_ query: [String: Any]) throws {
        let status = SecItemDelete(query as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw Failure(status: status) }
    }
}
#endif
