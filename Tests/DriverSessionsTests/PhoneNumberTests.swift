import DriverSessions
import Testing

@Suite("PhoneNumber: normalisation and masking")
struct PhoneNumberTests {
    @Test(arguments: ["9876543210", "+919876543210", "919876543210"])
    func validFormsNormaliseToTheSameDigits(text: String) throws {
        let phone = try #require(PhoneNumber(text))
        #expect(phone.digits == "9876543210")
        #expect(phone == PhoneNumber("9876543210"))
        #expect(phone.international == "+919876543210")
        #expect(phone.masked == "******3210")
    }

    @Test(arguments: ["6000000000", "7123456789", "8999999999", "9000000000", "916123456789"])
    func everyLeadingDigitSixToNineIsAccepted(text: String) throws {
        let phone = try #require(PhoneNumber(text))
        #expect(phone.digits.count == 10)
        #expect(text.hasSuffix(phone.digits))
    }

    @Test(arguments: [
        "5876543210",          // leading 5
        "1876543210",          // leading 1
        "987654321",           // 9 digits
        "98765432101",         // 11 digits
        "0987654321",          // leading 0
        "09876543210",         // trunk 0 + 10 digits
        "+929876543210",       // another country
        "929876543210",        // another country, no plus
        "+91987654321",        // +91 with 9 digits
        "+9198765432101",      // +91 with 11 digits
        "91987654321",         // 91 with 9 digits
        "+915876543210",       // +91 with a bad leading digit
        "+9876543210",         // plus without country code
        "98765 43210",         // space inside
        " 9876543210",         // leading space
        "9876543210 ",         // trailing space
        "98765-43210",         // dash
        "+91 9876543210",      // space after the prefix
        "987654321a",          // letter
        "abcdefghij",          // letters
        "٩٨٧٦٥٤٣٢١٠",          // Arabic-Indic digits
        "９８７６５４３２１０",    // full-width digits
        "",                    // empty
        "+91",                 // prefix only
        "91",
        String(repeating: "9", count: 100),
        String(repeating: "9876543210", count: 10_000),
        "+91" + String(repeating: "9", count: 1_000),
    ])
    func invalidFormsAreRefused(text: String) {
        #expect(PhoneNumber(text) == nil)
    }

    @Test func printedFormsShowOnlyTheLastFourDigits() throws {
        let phone = try #require(PhoneNumber("+919876543210"))
        var dumped = ""
        dump(phone, to: &dumped)
        var dumpedInArray = ""
        dump([phone], to: &dumpedInArray)
        let printed = [
            phone.description,
            String(describing: phone),
            String(reflecting: phone),
            "\(phone)",
            "\([phone])",
            "\(Optional(phone) as Any)",
            dumped,
            dumpedInArray,
        ]
        for text in printed {
            #expect(text.contains("******3210"), "\(text)")
            #expect(!text.contains("9876543210"), "full number printed")
            #expect(!text.contains("98765"), "leading digits printed")
        }
        #expect(phone.description == "******3210")
        #expect("\(phone)" == "******3210")
        // Mirror children expose only the masked form.
        let children = Mirror(reflecting: phone).children.map { "\($0.label ?? ""): \($0.value)" }
        #expect(children == ["masked: ******3210"])
    }
}
