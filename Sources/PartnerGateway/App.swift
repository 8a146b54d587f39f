@main struct App { static func main() {} }
