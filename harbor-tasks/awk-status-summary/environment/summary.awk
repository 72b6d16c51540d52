# Requests and bytes per status class of a Common Log Format access log.
{
    class = substr($8, 1, 1) "xx"
    requests[class]++
    bytes[class] += $10
    total++
    sent += $10
}
END {
    for (class in requests)
        print class, requests[class], bytes[class]
    print "total", total, sent
}
