# Requests and bytes per status class of a Common Log Format access log.
{
    class = substr($9, 1, 1) "xx"
    size = ($10 == "-") ? 0 : $10
    requests[class]++
    bytes[class] += size
    total++
    sent += size
}
END {
    for (digit = 1; digit <= 5; digit++) {
        class = digit "xx"
        if (class in requests)
            print class, requests[class], bytes[class]
    }
    print "total", total + 0, sent + 0
}
