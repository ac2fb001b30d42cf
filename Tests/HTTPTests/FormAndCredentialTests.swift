import Testing
@testable import HTTP

@Suite struct FormAndCredentialTests {
    static let forms: [(String, [HTTPQueryItem]?)] = [
        ("text=go+ann%21", [HTTPQueryItem("text", "go ann!")]),
        ("a=1&b=2&a=3", [HTTPQueryItem("a", "1"), HTTPQueryItem("b", "2"), HTTPQueryItem("a", "3")]),
        ("&&a=&b", [HTTPQueryItem("a", ""), HTTPQueryItem("b", "")]),
        ("e=%C3%A9%e2%82%ac", [HTTPQueryItem("e", "é€")]),
        ("x=a=b", [HTTPQueryItem("x", "a=b")]),
        ("", []),
        ("bad=%G0", nil),
        ("bad=%C3", nil),
        ("bad=%00", nil),
        ("bad=%", nil),
    ]

    @Test(arguments: forms) func formBodiesDecode(_ body: String, _ expected: [HTTPQueryItem]?) {
        let items = try? FormURLEncoding.items(Array(body.utf8))
        #expect(items == expected)
    }

    @Test func encodingRoundTrips() throws {
        let items = [HTTPQueryItem("text", "Go, Ann! 100% é & ="), HTTPQueryItem("from", "ö")]
        let encoded = FormURLEncoding.encode(items)
        #expect(encoded == "text=Go%2C+Ann%21+100%25+%C3%A9+%26+%3D&from=%C3%B6")
        #expect(try FormURLEncoding.items(Array(encoded.utf8)) == items)
    }

    static let authorizations: [(String, HTTPBasicCredentials?)] = [
        ("Basic YW5uOnNlY3JldA==", HTTPBasicCredentials(user: "ann", password: "secret")),
        ("basic YW5uOnNlY3JldA", HTTPBasicCredentials(user: "ann", password: "secret")),
        ("BASIC   YW5uOg==", HTTPBasicCredentials(user: "ann", password: "")),
        ("Basic w7Y6w6k=", HTTPBasicCredentials(user: "ö", password: "é")),
        ("Basic YW5u", nil),                 // no colon
        ("Bearer YW5uOnNlY3JldA==", nil),
        ("Basic YW5uOnNlY3JldA=!", nil),
        ("Basic YW5uOnNlY3JldA===", nil),
        ("Basic Y", nil),
        ("Basic YR==", nil),                 // leftover bits
        ("Basic", nil),
        ("Basic YW5uOgo=", nil),             // "ann:\n": control character
    ]

    @Test(arguments: authorizations) func basicCredentialsDecode(_ value: String, _ expected: HTTPBasicCredentials?) {
        #expect(HTTPBasicCredentials(authorization: value) == expected)
    }

    @Test func base64RoundTripsEveryLength() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(Base64.decode(Array(Base64.encode(bytes).utf8)) == bytes, "length \(length)")
        }
        #expect(HTTPBasicCredentials(user: "ann", password: "secret").authorization == "Basic YW5uOnNlY3JldA==")
    }
}
